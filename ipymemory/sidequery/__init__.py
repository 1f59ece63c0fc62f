"""Side-queries: tool-free model calls that select, extract and consolidate memories."""
