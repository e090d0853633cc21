"""Name the mistake, not only the failed check.

``catalogue`` reads the known mistakes (one YAML file each, a patch of the
reference); ``diagnose`` replays what a failed check asked of the student on
the reference and on each catalogued variant, in the judge, and says which
mistake the student's answers match.
"""
