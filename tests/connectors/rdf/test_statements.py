"""Cutting TriG and N-Quads into statements, so that a broken one spoils only itself."""

from connectors.rdf.statements import Statement, nquads_batches, trig_statements


def _cut(text: str) -> list[tuple[int, str, bool]]:
    lines = text.splitlines(keepends=True)
    return [(s.line, s.text.strip(), s.directive) for s in trig_statements(lines)]


def test_directives_blocks_and_default_graph_statements() -> None:
    text = (
        "@prefix ex: <http://ex.org/> .\n"
        "PREFIX sosa: <http://www.w3.org/ns/sosa/>\n"
        "BASE <http://ex.org/base/>\n"
        "# a comment { with a brace\n"
        "ex:g1 {\n"
        "  ex:a ex:b ex:c .\n"
        "  ex:a ex:n 1.5 .\n"
        "}\n"
        "ex:g1 ex:at 2. GRAPH ex:g2 { ex:a ex:b ex:c } ex:g2 ex:at 3 .\n"
    )
    assert _cut(text) == [
        (1, "@prefix ex: <http://ex.org/> .", True),
        (2, "PREFIX sosa: <http://www.w3.org/ns/sosa/>", True),
        (3, "BASE <http://ex.org/base/>", True),
        (5, "ex:g1 {\n  ex:a ex:b ex:c .\n  ex:a ex:n 1.5 .\n}", False),
        (9, "ex:g1 ex:at 2.", False),
        (9, "GRAPH ex:g2 { ex:a ex:b ex:c }", False),
        (9, "ex:g2 ex:at 3 .", False),
    ]


def test_braces_dots_and_hashes_inside_strings_iris_and_comments_do_not_count() -> None:
    text = (
        "ex:g { ex:a ex:b \"}. #\" ; ex:c <http://x.org/a#b>, '{' . # } .\n"
        '  ex:a ex:d """long { .\n'
        'still } "string" """ }\n'
        "ex:h { ex:a ex:b ex:c }\n"
    )
    cut = _cut(text)
    assert [(line, text.startswith(("ex:g ", "ex:h "))) for line, text, _ in cut] == [
        (1, True),
        (4, True),
    ]
    assert cut[0][1].endswith('""" }')


def test_an_unterminated_string_ends_its_statement_with_its_line() -> None:
    text = 'ex:g1 { ex:a ex:b "open\nline" }\nex:g2 { ex:a ex:b ex:c }\n'
    assert _cut(text) == [
        (1, 'ex:g1 { ex:a ex:b "open', False),
        (2, 'line" }', False),
        (3, "ex:g2 { ex:a ex:b ex:c }", False),
    ]


def test_an_unfinished_statement_comes_out_at_the_end() -> None:
    assert _cut("ex:g { ex:a ex:b ex:c .\n") == [(1, "ex:g { ex:a ex:b ex:c .", False)]


def test_nquads_lines_are_batched_by_graph_label() -> None:
    lines = [
        "<http://a> <http://b> <http://c> <http://g1> .\n",
        "\n",
        "# comment\n",
        '<http://a> <http://b> "x y" <http://g1> .\n',
        "<http://g1> <http://t> <http://c> .\n",
        "<http://a> <http://b> <http://c> <http://g2> .\n",
    ]
    batches = [[s.line for s in batch] for batch in nquads_batches(lines)]
    assert batches == [[1, 4], [5], [6]]
    first = next(nquads_batches(lines))
    assert first[0] == Statement(1, lines[0])
