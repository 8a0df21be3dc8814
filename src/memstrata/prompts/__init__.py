"""Prompts, one module each: the prompt function sits beside the response model it expects."""
