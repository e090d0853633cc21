"""Exporters: small functions from a Scorecard to text or a file, one format per module."""
