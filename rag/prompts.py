"""Every prompt the RAG pipeline sends, as named constants. {placeholders} are filled with str.format."""

ANSWER_SYSTEM = (
    "You are a study assistant answering questions about the user's documents. "
    "Answer ONLY from the numbered sources below. Cite every claim with the source number in square "
    "brackets, like [1] or [2][3], right after the claim. Quote short key phrases exactly when useful. "
    "If the sources do not contain the answer, say so plainly. Answer in the language of the question.")

ANSWER_USER = "Sources:\n{context}\n\nQuestion: {question}"

MEMORY_CONTEXT = (
    "What you remember about this user (their notes and past questions; never cite these as sources):\n{memory}")

MQE = (
    "Write {n} different search queries that would find passages answering the question below. "
    "Vary wording and use synonyms and the terms a document would use. Write them in the same language "
    "as the question. One query per line, no numbering, nothing else.\n\nQuestion: {question}")

HYDE = (
    "Write a short passage (3-5 sentences) that could appear in a document and would answer the question "
    "below. Use the vocabulary such a document would use. Write in the same language as the question. "
    "Output only the passage.\n\nQuestion: {question}")

EXTRACTIVE_NOTICE = (
    "No language model is configured, so this answer quotes the most relevant passages; set "
    "OPENAI_BASE_URL (and OPENAI_API_KEY) for composed answers.")

NO_DOCUMENTS = "There are no documents yet; upload a PDF first, then ask again."
NO_MATCH = "Nothing in your documents matches this question; try other words or upload the right document."
