"""The AmbER build starts without paying for inflect 6+'s typeguard instrumentation.

inflect 7 spent ~2 s of every `namesake amber build` start-up instrumenting its own
functions with typeguard; inflect 5.x (the line the published pipeline used) has the same
`number_to_words` output and imports in milliseconds. Timings live in
benchmarks/bench_startup.py; this test checks the cause, which holds on any machine.
"""

import subprocess
import sys


def test_build_import_does_not_load_typeguard():
    code = "import sys, namesake.amber.build; print('typeguard' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_number_words_of_the_published_inflect_line():
    from namesake.amber.names import _quantity_names

    assert _quantity_names("+1999")["additional_aliases"] == [
        "one thousand, nine hundred and ninety-nine"
    ]
    assert _quantity_names("+1000000000000000")["additional_aliases"] == ["one quadrillion"]
    assert _quantity_names("-3.25")["additional_aliases"] == ["three point two five"]
