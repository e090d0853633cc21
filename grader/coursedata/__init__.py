"""Course data: the files a course and its LMS keep, read (and written back) as they are, and nothing
of grading.

Both ``grader.batch`` (who handed in what, whose row is whose) and ``grader.export`` (the Canvas import's
ids, the Moodle worksheet's participants) read these files, so they live below both, in a layer of their
own: this package imports nothing from ``grader.batch``, ``grader.export`` or ``grader.cli``
(``tests/test_layout.py`` checks it from the import graph, as it checks that export imports nothing of
the batch). Module by module:

* ``roster``: the class list (Canvas, Gradescope, Moodle, Classroom or plain CSV), as staff download it.
* ``lms``, ``lms_readers``, ``lms_files``: an LMS's bulk download: which one it is, one reader each,
  and what the readers yield and share (picking a student's one file, ``NotGraded``).
* ``unzip``: a class's zip as the LMS or staff made it, unpacked member by member.
* ``moodle_worksheet``: Moodle's grading worksheet, read as its importer reads it and written back as it
  came; it is a class list too (``roster`` reads it as one).

What stays out: files made from cards and gradebook rows (``grader.export``: the Canvas import file, what
goes into the worksheet's grade and comment cells, which worksheet row is which student), and where a
batch keeps its own files (``grader.batch.layout``: its records are the batch's output, read back for
``grader export`` through a reader the CLI passes in).
"""
