"""Retrieval on AmbER and its evaluation: runs (`retrieve`, `fusion`; read and written by
`namesake.runs.Run`), their scores (`scoring`, `ir_metrics`, `query_scores`), the report beside
the paper (`report`, `paper`), comparisons with intervals and paired tests (`compare`,
`compare_runs`, `statistics`), BEIR export (`beir_export`) and the end-to-end readers
(`readers`)."""
