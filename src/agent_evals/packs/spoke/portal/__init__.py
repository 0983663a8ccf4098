"""The portal backend: spoke domain, git test repository, PR store, MCP tools, REST and HTML.

Submodules are imported explicitly (``agent_evals.packs.spoke.portal.process`` stays light for the
runner; ``agent_evals.packs.spoke.portal.app`` pulls in FastAPI and MCP). See docs/portal.md.
"""
