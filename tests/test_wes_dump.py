"""Streaming pages out of MediaWiki XML exports: the real sample, multistream, bad input."""

import bz2
from pathlib import Path

import pytest
from conftest import WIKIPEDIA_EXCERPT
from dumps import split_pages, write_multistream

from namesake.errors import BadInputError, InputProblems
from namesake.wikipedia.dump import (
    Page,
    iter_pages,
    iter_pages_between,
    stream_offsets,
    stream_ranges,
)

PAGES_PER_STREAM = 20


@pytest.fixture(scope="module")
def sample_xml() -> bytes:
    return bz2.decompress(WIKIPEDIA_EXCERPT.read_bytes())


@pytest.fixture(scope="module")
def sample_pages() -> list[Page]:
    return list(iter_pages(WIKIPEDIA_EXCERPT))


@pytest.fixture(scope="module")
def multistream(sample_xml, tmp_path_factory) -> tuple[Path, list[int]]:
    """The sample as a multistream dump: header, streams of 20 pages, closing tag."""
    path = tmp_path_factory.mktemp("multistream") / "enwiki-pages-articles-multistream.xml.bz2"
    return path, write_multistream(path, sample_xml, PAGES_PER_STREAM)


def export(*pages: str) -> bytes:
    """A small export around hand-written <page> elements."""
    body = "".join(pages)
    return f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/">\n{body}</mediawiki>\n'.encode()


def page_xml(title, ns=0, page_id=1, text="Some [[text]].", extra="", revisions=None) -> str:
    if revisions is None:
        revisions = [f'<text xml:space="preserve">{text}</text>']
    revs = "".join(f"<revision><id>{i}</id>{rev}</revision>\n" for i, rev in enumerate(revisions))
    fields = f"<title>{title}</title>\n<ns>{ns}</ns>\n<id>{page_id}</id>\n"
    return f"<page>\n{fields}{extra}{revs}</page>\n"


def test_sample_pages(sample_pages):
    assert len(sample_pages) == 205  # the 206th page is in the Wikipedia namespace
    assert all(page.namespace == 0 for page in sample_pages)
    by_title = {page.title: page for page in sample_pages}
    assert len(by_title) == 205
    assert by_title["Anarchism"].page_id == 12
    assert by_title["Autism"].page_id == 25
    assert "is a [[political philosophy]] that" in by_title["Anarchism"].text
    assert "?id=kkj5i3CeGbQC&printsec=" in by_title["Anarchism"].text  # XML's &amp; decoded
    assert by_title["AccessibleComputing"].redirect == "Computer accessibility"
    assert by_title["AccessibleComputing"].text.startswith("#REDIRECT [[Computer accessibility]]")
    redirects = [page for page in sample_pages if page.redirect is not None]
    assert len(redirects) == 99
    assert all(page.redirect.strip() for page in redirects)
    assert all(page.text.lstrip()[:9].upper() == "#REDIRECT" for page in redirects)
    assert by_title["Anarchism"].redirect is None


def test_namespaces_are_selectable():
    all_pages = list(iter_pages(WIKIPEDIA_EXCERPT, namespaces=(0, 4)))
    assert len(all_pages) == 206
    project = list(iter_pages(WIKIPEDIA_EXCERPT, namespaces=[4]))
    assert [page.title for page in project] == ["Wikipedia:Adding Wikipedia articles to Nupedia"]


def test_plain_and_bz2_give_the_same_pages(sample_xml, sample_pages, tmp_path):
    plain = tmp_path / "sample.xml"
    plain.write_bytes(sample_xml)
    assert list(iter_pages(plain)) == sample_pages
    assert list(iter_pages(WIKIPEDIA_EXCERPT, threads=2)) == sample_pages


def test_latest_revision_and_redirect(tmp_path):
    path = tmp_path / "dump.xml"
    revisions = ["<text>old [[A]]</text>", "<text>new [[B]] &amp; more</text>"]
    redirect = page_xml("R", page_id=2, text="#REDIRECT [[T]]", extra='<redirect title="T" />')
    path.write_bytes(export(page_xml("P", revisions=revisions), redirect))
    assert list(iter_pages(path)) == [
        Page("P", 0, 1, None, "new [[B]] & more"),
        Page("R", 0, 2, "T", "#REDIRECT [[T]]"),
    ]


def test_pages_without_text_are_counted_or_refused(tmp_path):
    path = tmp_path / "dump.xml"
    path.write_bytes(
        export(
            page_xml("Fine", page_id=1),
            page_xml("No text", page_id=2, revisions=["<comment>gone</comment>"]),
            page_xml("Deleted", page_id=3, revisions=['<text deleted="deleted" />']),
            page_xml("Empty", page_id=4, text=""),
            page_xml("Talk:No text", ns=1, page_id=5, revisions=[""]),  # not read at all
        )
    )
    problems = InputProblems()
    assert [page.title for page in iter_pages(path, problems)] == ["Fine", "Empty"]
    assert problems.counts == {(str(path), "page without text"): 2}
    assert [page.title for page in iter_pages(path)] == ["Fine", "Empty"]
    with pytest.raises(BadInputError, match="page without text: 'No text'") as error:
        list(iter_pages(path, InputProblems(strict=True)))
    assert error.value.path == str(path) and error.value.line == 8  # where the page starts


def test_malformed_xml_names_the_file_line_and_last_page(sample_xml, tmp_path):
    _header, pages, _footer = split_pages(sample_xml)
    damaged = pages[50].replace(b"</title>", b"</titel>", 1)
    cut = sample_xml.index(pages[50])
    path = tmp_path / "malformed.xml"
    path.write_bytes(sample_xml[:cut] + damaged + sample_xml[cut + len(pages[50]) :])
    with pytest.raises(BadInputError, match="malformed XML.*mismatched tag") as error:
        list(iter_pages(path))
    assert error.value.path == str(path)
    assert error.value.line == sample_xml[:cut].count(b"\n") + 2
    previous_title = pages[49].split(b"<title>")[1].split(b"</title>")[0].decode()
    assert f"after page {previous_title!r}" in str(error.value)


def test_truncated_xml_is_an_error(sample_xml, tmp_path):
    path = tmp_path / "truncated.xml"
    path.write_bytes(sample_xml[: len(sample_xml) // 2])
    with pytest.raises(BadInputError, match="ends early") as error:
        list(iter_pages(path))
    assert str(path) in str(error.value)
    path.write_bytes(sample_xml[: sample_xml.rindex(b"</mediawiki>")])  # cut between pages
    with pytest.raises(BadInputError, match="ends early"):
        list(iter_pages(path))


def test_truncated_bz2_is_an_error(tmp_path):
    path = tmp_path / "truncated.xml.bz2"
    path.write_bytes(WIKIPEDIA_EXCERPT.read_bytes()[:800_000])
    with pytest.raises(BadInputError, match="corrupt or truncated bz2") as error:
        list(iter_pages(path))
    assert error.value.path == str(path)
    assert "after page" in str(error.value)


def test_not_xml_at_all(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("just some text\n")
    with pytest.raises(BadInputError, match="malformed XML"):
        list(iter_pages(path))


def test_stream_offsets_of_a_multistream_dump(multistream):
    path, offsets = multistream
    assert len(offsets) == 2 + 11  # header, 206 pages in streams of 20, closing tag
    assert stream_offsets(path) == offsets
    assert stream_offsets(WIKIPEDIA_EXCERPT) == [0]  # one stream: one range


def test_stream_offsets_from_the_index(multistream, sample_pages, tmp_path):
    path, offsets = multistream
    lines = []
    for number, page in enumerate(sample_pages):  # the index lists every page of a stream
        lines.append(f"{offsets[1 + number // PAGES_PER_STREAM]}:{page.page_id}:{page.title}\n")
    index = tmp_path / "enwiki-pages-articles-multistream-index.txt.bz2"
    index.write_bytes(bz2.compress("".join(lines).encode()))
    # The ns-4 page (number 204 of 206) makes no difference: it shares the last page stream.
    assert stream_offsets(path, index) == offsets[:-1]  # the closing stream has no pages
    index.write_bytes(bz2.compress(b"12:34:fine\nbroken line\n"))
    with pytest.raises(BadInputError, match="offset:page_id:title") as error:
        stream_offsets(path, index)
    assert error.value.line == 2


def test_ranges_of_a_multistream_dump_give_the_same_pages(multistream, sample_pages):
    path, offsets = multistream
    assert list(iter_pages(path)) == sample_pages
    size = path.stat().st_size
    one_per_stream = []
    for start, end in zip(offsets, [*offsets[1:], size], strict=True):
        one_per_stream.extend(iter_pages_between(path, start, end))
    assert one_per_stream == sample_pages
    for parts in (1, 2, 3):
        ranges = stream_ranges(path, parts)
        assert len(ranges) == parts and ranges[0][0] == 0 and ranges[-1][1] == size
        pages = [page for start, end in ranges for page in iter_pages_between(path, start, end)]
        assert pages == sample_pages


def test_a_single_stream_file_is_one_range(sample_pages):
    size = WIKIPEDIA_EXCERPT.stat().st_size
    assert stream_ranges(WIKIPEDIA_EXCERPT, 4) == [(0, size)]
    assert list(iter_pages_between(WIKIPEDIA_EXCERPT, 0, size)) == sample_pages


def test_a_damaged_range_names_its_first_byte(multistream, tmp_path):
    path, offsets = multistream
    data = bytearray(path.read_bytes())
    middle = (offsets[3] + offsets[4]) // 2
    data[middle : middle + 200] = bytes(200)
    damaged = tmp_path / "damaged-multistream.xml.bz2"
    damaged.write_bytes(bytes(data))
    assert list(iter_pages_between(damaged, offsets[2], offsets[3]))  # the ranges before: fine
    with pytest.raises(BadInputError, match=f"in the bz2 range from byte {offsets[3]}"):
        list(iter_pages_between(damaged, offsets[3], offsets[4]))
    with pytest.raises(BadInputError, match="truncated bz2"):  # a range cut inside a stream
        list(iter_pages_between(path, offsets[3], offsets[4] - 100))
