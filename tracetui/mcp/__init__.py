"""The Model Context Protocol server: a thin face over check, explain and replay for coding assistants (issue 23)."""
