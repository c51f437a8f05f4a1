"""Judging QA answers the way people do: the `wes_similarity` metric's scorers, fitted and
measured on human judgments (EVOUNA), with the classic answer metrics beside them."""
