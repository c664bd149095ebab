"""Every prompt the assistant itself sends (document answers use `rag.prompts`)."""

INTENT = (
    "Classify the user's question. Answer MEMORY if it asks about the user's own past activity "
    "(what they studied, read, uploaded, asked or noted, their progress or preferences). Answer "
    "DOCUMENTS if it asks about the content of their documents or a topic. One word only.\n\n"
    "Question: {question}")

CONDENSE = (
    "Rewrite the last question of this conversation as a standalone question that can be understood "
    "without the conversation (resolve 'it', 'that example', 'the second one', etc. with the words the "
    "conversation uses). Do not answer it. Add no words of your own: use only words from the conversation "
    "and the question. Keep its language. Output only the question, on one line."
    "\n\nConversation:\n{conversation}\n\nLast question: {question}")

MEMORY_ANSWER_SYSTEM = (
    "You are a study assistant. Answer the user's question about their own learning history using ONLY "
    "the memory records below (what they loaded, asked, and noted, with dates). Be concise; mention dates "
    "and document names. If the records do not answer it, say so. Answer in the language of the question.")

MEMORY_ANSWER_USER = "Memory records{period}:\n{records}\n\nQuestion: {question}"

NO_MEMORIES = "I have no record of that in your learning history{period} yet."
MEMORY_HEADER = "From your learning history{period}:"
MEMORY_UNSUPPORTED_NOTICE = "What the model wrote is not in your records, so your records are listed instead."
