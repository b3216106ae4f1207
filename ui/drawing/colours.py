"""Colour maths for the charts: the two schemes as Vega draws them, WCAG contrast, and the Vega-Lite
expressions that print black text on light cells and white on dark ones (at least 4.5:1 everywhere).

No Streamlit or Altair here: plain functions, so the contrast test can use the very same numbers.
"""

from __future__ import annotations

import functools

import altair as alt

# The two colour schemes exactly as Vega defines them (vega-scale's stops, in order), which Vega
# interpolates piecewise-linearly in RGB. Kept here to choose each cell's text colour from its fill.
SCHEME_STOPS = {
    "viridis": "440154470e61481a6c482575472f7d443a834144873d4e8a39568c35608d31688e2d708e2a788e27818e2388"
               "8e21918d1f988b1fa08822a8842ab07f35b77943bf7154c56866cc5d7ad1518fd744a5db36bcdf27d2e21be9e5"
               "1afde725",
    "purpleorange": "4114696647968f83b7b9b4d6dadbebf3eeeafce0bafbbf74e8932fc5690d994a07",
}
DARK_TEXT, LIGHT_TEXT = "#000000", "#ffffff"
MISSING_FILL = "#d9d9d9"  # cells with no finite value (NaN, -inf from a mask)
# A chart's subtitle (the grey shape line): Streamlit's chart theme colours titles and axes for the app's
# theme but leaves a subtitle to Vega's default, black, which is invisible on the dark theme. No one grey
# reads at 4.5:1 on both white and #0e1117, so the colour follows the chart's background, which the theme
# sets (Vega's `background` signal); a chart without one (an exported file) is drawn on white.
SUBTITLE_ON_LIGHT, SUBTITLE_ON_DARK = "#5c606b", "#b8bbc2"  # 6.3:1 on white, 9.8:1 on #0e1117
# Black and white text have equal contrast on a fill of this relative luminance (about 4.58:1 each):
# above it black is the better, below it white, so every fill gets at least 4.5:1 (WCAG AA).
_EVEN_LUMINANCE = (1.05 * 0.05) ** 0.5 - 0.05


def scheme_rgb(scheme: str, t: float) -> tuple[float, float, float]:
    """The colour at position t (0..1) of a Vega scheme, as Vega computes it: linear RGB between stops."""
    hexes = SCHEME_STOPS[scheme]
    stops = [[int(hexes[i + j:i + j + 2], 16) for j in (0, 2, 4)] for i in range(0, len(hexes), 6)]
    n = len(stops) - 1
    t = min(max(float(t), 0.0), 1.0)
    i = min(int(t * n), n - 1)
    f = t * n - i
    return tuple(a + (b - a) * f for a, b in zip(stops[i], stops[i + 1]))


def luminance(rgb) -> float:
    """WCAG relative luminance of an sRGB colour given as 0..255 components or '#rrggbb'."""
    if isinstance(rgb, str):
        rgb = [int(rgb.lstrip("#")[k:k + 2], 16) for k in (0, 2, 4)]
    lin = [(c / 255) / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b) -> float:
    """WCAG contrast ratio of two colours (1 to 21)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


# dark_text_bands of each scheme, written out: sampling 2,000 colours costs 0.1 s a scheme, which a fresh server
# paid before its first chart (tests/ui/test_contrast.py works them out again and compares).
DARK_TEXT_BANDS = {"viridis": ((0.431, 1.0),), "purpleorange": ((0.1605, 0.935),)}


@functools.cache
def dark_text_bands(scheme: str, samples: int = 2000) -> tuple[tuple[float, float], ...]:
    """The stretches of a scheme (positions 0..1) light enough to need black text; white elsewhere."""
    bands, start = [], None
    for k in range(samples + 1):
        t = k / samples
        light = luminance(scheme_rgb(scheme, t)) > _EVEN_LUMINANCE
        if light and start is None:
            start = t
        if not light and start is not None:
            bands.append((start, (k - 1) / samples))
            start = None
    if start is not None:
        bands.append((start, 1.0))
    return tuple(bands)  # cached: shared by every caller, so not a list one of them could change


def scale_position(diverging: bool, domain: tuple[float, float] | None) -> list[dict]:
    """Vega-Lite calculate transforms that put each cell's position on its colour scale (0..1) in `_t`,
    as Vega maps it: a fixed domain as given, else the data's extent; a diverging scale puts 0 at the
    middle (Vega sorts the extent and 0 into [d0, d1, d2] and maps them to 0, 0.5, 1)."""
    datum, expr = alt.datum, alt.expr
    lo, hi = (datum._lo, datum._hi) if domain is None else (float(domain[0]), float(domain[1]))
    v, d0, d1, d2 = datum.value, datum._d0, datum._d1, datum._d2
    if diverging:
        steps = [(expr.min(lo, 0), "_d0"), (expr.max(hi, 0), "_d2"), (lo + hi - d0 - d2, "_d1"),
                 (0.5 + (v - d1) * expr.if_(v < d1, expr.if_(d1 == d0, 0, 0.5 / (d1 - d0)),
                                            expr.if_(d2 == d1, 0, 0.5 / (d2 - d1))), "_u")]
    elif domain is None:
        steps = [(expr.if_(hi == lo, 0.5, (v - lo) / (hi - lo)), "_u")]
    else:  # a fixed domain: its width is a number here
        steps = [((v - lo) / (hi - lo) if hi != lo else 0.5, "_u")]
    steps.append((expr.clamp(datum._u, 0, 1), "_t"))
    return [{"calculate": str(formula), "as": name} for formula, name in steps]


def text_colour_test(scheme: str) -> str:
    """The Vega expression that is true where a cell needs black text: its fill (at `_t` on the scheme)
    is light, or it has no finite value (a light grey cell)."""
    value, t = alt.datum.value, alt.datum._t
    test = ~alt.expr.isValid(value) | ~alt.expr.isFinite(value)
    for a, b in DARK_TEXT_BANDS[scheme]:
        test = test | ((t >= round(a, 4)) & (t <= round(b, 4)))
    return str(test)
def text_colour(scheme: str) -> dict:
    """A Vega-Lite colour channel for a cell's number: black where text_colour_test holds, else white."""
    return {"condition": {"test": text_colour_test(scheme), "value": DARK_TEXT}, "value": LIGHT_TEXT}


def subtitle_colour() -> dict:
    """A Vega-Lite expression for a subtitle's colour that reads on the chart's background, light or dark."""
    return {"expr": f"isString(background) && luminance(background) < 0.18 ? '{SUBTITLE_ON_DARK}' : "
                    f"'{SUBTITLE_ON_LIGHT}'"}
