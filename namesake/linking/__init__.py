"""Entity linking as retrieval (BLINK style): a mention in its context is embedded and matched
against every page, embedded as its title and opening words.

- :mod:`namesake.linking.inputs`: the encoder inputs, a mention marked in its context and a page
  as title plus opening words, and the linker settings saved with a trained encoder;
- :mod:`namesake.linking.query_mentions`: mentions of a query (spaCy NER, noun chunks as the
  fallback);
- :mod:`namesake.linking.wiki_mentions`: training data from a pages-articles dump, each link
  text in its sentence with its target page, split by source article;
- :mod:`namesake.linking.same_name`: the hard negatives AmbER is about, other pages whose title
  shares the mention's name.

The retriever is :class:`namesake.linking.linker.EntityLinkRetriever`; the encoder is trained
by ``training/train_entity_linker.py``.
"""
