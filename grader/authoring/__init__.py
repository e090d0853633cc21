"""Adding an exercise: ``grader new-exercise`` writes every placeholder (new_exercise.py), and
``completeness.missing`` names every piece an exercise still lacks, with the file to fill
(docs/adding-an-exercise.md walks through both)."""
