"""Study features: flashcards made from what a person studied, spaced review (FSRS), quizzes, deck
export/import and mastery. `study.desk.StudyDesk` is the one entry the facade hands out
(`PDFLearningAssistant.study`); the modules below it each do one job:

- `types`     Card, Review and quiz models
- `store`     the cards' SQLite file (every query keyed by user)
- `cloze`     cards without an LLM: a defined term or heading term blanked out of its sentence
- `qa_cards`  question/answer cards written by the LLM, kept only when the passage supports them
- `schedule`  FSRS scheduling (the `fsrs` package)
- `quiz`      multiple choice and short answers, graded
- `exchange`  Anki .apkg and CSV export, Anki CSV import
- `quality`   `python -m study.quality`: how many cards their source supports, near-duplicates, languages
- `mastery`   strong and weak concepts, sections never studied
"""
