"""Entity-conditioned question generation and Mixed-DPR (issue 5)."""
