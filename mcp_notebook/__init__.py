"""mcp_notebook."""
