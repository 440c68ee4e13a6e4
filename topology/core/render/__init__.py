"""Renderers: values in, text out. Nothing here decides anything or touches a file."""
