"""Reading Wikipedia: pages-articles XML dumps (`dump`), their internal links (`links`) and
wikitext as plain text (`wikitext`). The lowest layer that knows Wikipedia: WES mining, the
question-generation passages and the entity linker's training data all read it here."""
