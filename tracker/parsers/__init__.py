"""Parsers: pure functions from bytes to plain records.

A parser never opens a file, touches the database or the network: the caller
reads the bytes (or streams the lines) and passes them in with the path to
name in error messages. Each parser raises only :class:`tracker.errors.ParseError`.
"""
