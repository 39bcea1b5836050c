"""Evaluation runners."""
