"""The grader's version: part of every card, and of what decides whether a re-run may skip a student."""

__version__ = "0.2.0"
