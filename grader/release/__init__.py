"""`grader release`: what course staff hand to students (stubs, notebooks, the student kit)."""
