"""Entity-conditioned question generation and Mixed-DPR: passages, attention analysis,
question generation, filtering, the synthetic set and DPR."""
