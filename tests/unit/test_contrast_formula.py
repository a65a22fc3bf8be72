"""The WCAG contrast formula the browser tests measure with (``tests/contrast.py``), and the
views' palette (:mod:`estatebot._theme`) held to it in JupyterLab's own light and dark themes."""

from __future__ import annotations

import re
from pathlib import Path

import jupyterlab
import pytest
from hypothesis import given
from hypothesis import strategies as st

from contrast import (
    contrast_ratio,
    needed_ratio,
    over,
    parse_hex,
    relative_luminance,
)
from estatebot import _theme

channel = st.integers(min_value=0, max_value=255)
colour = st.tuples(channel, channel, channel)


def test_black_on_white_is_21_to_1() -> None:
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#fff", "#000") == pytest.approx(21.0)


def test_known_pairs() -> None:
    # #777 on white is the classic "just below AA" grey; #767676 the first grey to pass.
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.005)
    assert contrast_ratio("#767676", "#ffffff") >= 4.5
    # JupyterLab's warning orange under white text, light theme (#f57c00) and dark (#ff9800),
    # and its dark theme's green: the badges that failed before.
    assert contrast_ratio("#f57c00", "#ffffff") == pytest.approx(2.70, abs=0.01)
    assert contrast_ratio("#ffffff", "#ff9800") == pytest.approx(2.16, abs=0.01)
    assert contrast_ratio("#ffffff", "#4caf50") == pytest.approx(2.78, abs=0.01)


def test_luminance_ends() -> None:
    assert relative_luminance("#000") == 0.0
    assert relative_luminance("#fff") == pytest.approx(1.0)
    assert relative_luminance((255, 0, 0)) == pytest.approx(0.2126)


def test_a_colour_against_itself_is_1() -> None:
    assert contrast_ratio("#3a7bd5", "#3a7bd5") == pytest.approx(1.0)


def test_alpha_over_a_background() -> None:
    # rgba(0,0,0,.54) on white is JupyterLab's muted grey (117,117,117).
    grey = over((0, 0, 0), 0.54, (255, 255, 255))
    assert [round(v) for v in grey] == [117, 117, 117]
    assert contrast_ratio(grey, (255, 255, 255)) == pytest.approx(4.6, abs=0.05)


def test_large_text_needs_3_to_1() -> None:
    assert needed_ratio(13, 400) == 4.5
    assert needed_ratio(24, 400) == 3.0
    assert needed_ratio(19, 700) == 3.0
    assert needed_ratio(19, 600) == 4.5
    assert needed_ratio(18, 700) == 4.5


def test_a_bad_colour_is_named() -> None:
    with pytest.raises(ValueError, match="'red'"):
        parse_hex("red")


@given(colour, colour)
def test_the_ratio_is_symmetric_and_bounded(
    a: tuple[int, int, int], b: tuple[int, int, int]
) -> None:
    ratio = contrast_ratio(a, b)
    assert ratio == pytest.approx(contrast_ratio(b, a))
    assert 1.0 <= ratio <= 21.0 + 1e-9


@given(colour, colour, colour)
def test_luminance_orders_the_ratio(
    a: tuple[int, int, int], b: tuple[int, int, int], c: tuple[int, int, int]
) -> None:
    # A colour further in luminance from the background never has less contrast with it.
    la, lb, lc = (relative_luminance(x) for x in (a, b, c))
    if la <= lb <= lc:
        assert contrast_ratio(a, c) >= contrast_ratio(b, c) - 1e-9


# --------------------------------------------------------------------------- the views' palette

_THEMES = Path(jupyterlab.__file__).parent / "themes" / "@jupyterlab"
_NAMED = {"white": "#ffffff", "black": "#000000"}


def theme_colours(theme: str) -> dict[str, str]:
    """JupyterLab's ``--jp-*`` colours of ``theme`` (``light`` or ``dark``), as ``#hex``."""
    css = (_THEMES / f"theme-{theme}-extension" / "index.css").read_text()
    found: dict[str, str] = {}
    for name, value in re.findall(r"(--jp-[\w-]+):\s*([^;}]+)", css):
        value = value.strip()
        fallback = re.search(r"#[0-9a-fA-F]{3,6}\b", value)
        if fallback:
            found.setdefault(name, fallback.group(0))
        elif value in _NAMED:
            found.setdefault(name, _NAMED[value])
    return found


def resolve(css: str, colours: dict[str, str]) -> tuple[float, ...]:
    """A colour of :mod:`estatebot._theme` as the browser draws it in a theme: its ``var()``
    looked up, a ``color-mix(in srgb, A p%, B)`` mixed channel by channel."""
    mix = re.fullmatch(r"color-mix\(in srgb, (.+) (\d+)%, (var\(.+\))\)", css)
    if mix:
        share = int(mix.group(2)) / 100
        first, second = resolve(mix.group(1), colours), resolve(mix.group(3), colours)
        return tuple(share * a + (1 - share) * b for a, b in zip(first, second, strict=True))
    var = re.fullmatch(r"var\((--jp-[\w-]+), ([^)]+)\)", css)
    assert var is not None, css
    return tuple(float(c) for c in parse_hex(colours[var.group(1)]))


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("accent", ["SUCCESS", "WARN", "ERROR", "BRAND"])
def test_the_accents_read_as_text_and_under_text_in_both_themes(theme: str, accent: str) -> None:
    colours = theme_colours(theme)
    colour = resolve(getattr(_theme, accent), colours)
    for layer in ("--jp-layout-color0", "--jp-layout-color1", "--jp-layout-color2"):
        ratio = contrast_ratio(colour, parse_hex(colours[layer]))
        assert ratio >= 4.5, (accent, theme, layer, round(ratio, 2))
    # A badge filled with the accent, its text in the page's colour (solid()).
    assert f"color:{_theme.LAYER1}" in _theme.solid(getattr(_theme, accent))
    paper = resolve(_theme.LAYER1, colours)
    assert contrast_ratio(paper, colour) >= 4.5


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_muted_text_reads_on_every_layer(theme: str) -> None:
    colours = theme_colours(theme)
    mix = re.fullmatch(r"color-mix\(in srgb, (var\(.+\)) (\d+)%, transparent\)", _theme.MUTED)
    assert mix is not None, _theme.MUTED
    ink, alpha = resolve(mix.group(1), colours), int(mix.group(2)) / 100
    for layer in ("--jp-layout-color0", "--jp-layout-color1", "--jp-layout-color2"):
        under = tuple(float(c) for c in parse_hex(colours[layer]))
        ratio = contrast_ratio(over(ink, alpha, under), under)
        assert ratio >= 4.5, (theme, layer, round(ratio, 2))


def test_jupyterlabs_own_accents_were_the_failures() -> None:
    # What the views used before: the theme's colours as they are. The badges' ratios of
    # the issue, so the fix above is held against the same numbers.
    light, dark = theme_colours("light"), theme_colours("dark")
    white = (255, 255, 255)
    warn_light = parse_hex(light["--jp-warn-color1"])
    assert contrast_ratio(warn_light, parse_hex(light["--jp-layout-color2"])) < 2.4
    assert contrast_ratio(white, warn_light) < 2.8
    assert contrast_ratio(white, parse_hex(dark["--jp-warn-color1"])) < 2.2
    assert contrast_ratio(white, parse_hex(dark["--jp-success-color1"])) < 2.8
