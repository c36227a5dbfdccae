"""A tiny client SDK."""
