"""Sandbox backends that run the in-sandbox runner."""
