"""Course data: the files a course and its LMS keep, read and written, and nothing of grading.

The class list (``roster``: Canvas, Gradescope, Moodle, Classroom or plain CSV), an LMS's bulk download
(``lms`` recognises which one, ``lms_readers`` reads each, ``lms_files`` is what they yield and share) and a
class's zip (``unzip``, member by member) are the course's files as staff get them. Both ``grader.batch``
(who handed in what, whose row is whose) and ``grader.export`` (the Canvas import's ids, the Moodle
worksheet's participants) stand on them, so they live below both, in a layer of their own: this package
imports nothing from ``grader.batch``, ``grader.export`` or ``grader.cli`` (``tests/test_layout.py``
checks it from the import graph). What is made from cards (gradebook rows, the Canvas and Moodle files
written from them) stays in ``grader.export``; where a batch keeps its own files stays in ``grader.batch``.
"""
