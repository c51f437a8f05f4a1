"""WES: mining Wiki Entity Similarity (entity names from link texts) out of Wikipedia dumps."""
