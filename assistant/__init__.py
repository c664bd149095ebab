"""The learning assistant facade: `get_assistant(user_id)` gives a user's PDFLearningAssistant.

    from assistant import get_assistant
    a = get_assistant("alice")
    a.load_document("paper.pdf")
    for piece in a.ask("What is the main result?"): ...
"""
from assistant.registry import AssistantRegistry, get_assistant, registry_for


def __getattr__(name):  # the facade imports RAG and memory; load it only when it is used
    if name == "PDFLearningAssistant":
        from assistant.facade import PDFLearningAssistant
        return PDFLearningAssistant
    raise AttributeError(name)


__all__ = ["PDFLearningAssistant", "AssistantRegistry", "get_assistant", "registry_for"]
