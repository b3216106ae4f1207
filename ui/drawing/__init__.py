"""How a matrix reaches the screen and the files: arrays in, Vega-Lite specs out (charts, plots, colours), a
spec's numbers as plain lists inside it (chart_data), drawing from a cached spec (render), tables as Arrow
(tables), and the export panel's CSV, PNG and SVG files (export)."""
