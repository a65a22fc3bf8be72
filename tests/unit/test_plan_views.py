"""What a person sees of a plan, a cleanup and an apply report: the HTML, the words, the figures."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tqdm import tqdm as terminal_tqdm
from tqdm.notebook import tqdm as notebook_tqdm

from estatebot._progress import finish_bar, set_total
from estatebot.listings.money import format_money, format_money_change
from estatebot.listings.sync.plan.operations import Change
from estatebot.listings.sync.report.apply_report import ApplyReport, OpOutcome, outcomes_frame
from estatebot.listings.sync.sync_plan import SyncPlan, plan_cleanup, plan_sync
from estatebot.listings.sync.views.plan_html import change_cells
from estatebot.listings.sync.views.value_diffs import key_diff, list_diff, word_diff
from factories import complete_listing as listing
from factories import remote_frame, sheet_frame

LONG = (
    "Well-kept 2-bedroom single-family home in Boston, built in 1976, with in-unit laundry and "
    "a fenced backyard. 1,830 sq ft. Available July 1; no smoking. Showings by appointment."
)


def plan_of(before: list[dict[str, Any]], after: list[dict[str, Any]], **options: Any) -> SyncPlan:
    return plan_sync(sheet_frame(*after), remote_frame(*before), **options)


def section(page: str, name: str) -> str:
    """The HTML of one section of a plan view (up to the next section)."""
    start = page.index(f"data-action='{name}'")
    end = page.find("<details", start)
    return page[start : end if end >= 0 else len(page)]


# --------------------------------------------------------------------------- money


def test_money_has_the_currency_and_thousands_separators() -> None:
    assert format_money(480000.0) == "$480,000"
    assert format_money(480000.0, "USD") == "$480,000"
    assert format_money(162.71, "$") == "$162.71"
    assert format_money(1250, "EUR") == "EUR 1,250"
    assert format_money(1250, "€") == "€1,250"
    assert format_money(-15000, "$") == "−$15,000"
    assert format_money(None) == ""


def test_a_money_change_reads_as_amount_and_percent() -> None:
    assert format_money_change(480000, 465000, "$") == "−$15,000, −3.1%"
    assert format_money_change(480000, 489900, "USD") == "+$9,900, +2.1%"
    assert format_money_change(0, 1000, "$") == "+$1,000"  # no percent of nothing
    assert format_money_change(None, 1000, "$") == ""


def test_the_plan_shows_a_price_change_as_money() -> None:
    page = plan_of([listing(1, SalePrice=480000.0)], [listing(1, SalePrice=465000.0)])._repr_html_()
    assert "<del>$480,000</del>" in page
    assert "<ins>$465,000</ins>" in page
    assert "(−$15,000, −3.1%)" in page
    assert "480000.0" not in page
    cell = re.search(r"<td class='eb-after eb-num'>[^\n]*?\$465,000", page)
    assert cell is not None  # money is a number: right-aligned


def test_a_rent_in_another_currency_keeps_its_code() -> None:
    before = listing(1, SaleType="for_rent", SalePrice=None, RentPrice=2000.0, CurrencySymbol="EUR")
    page = plan_of([before], [{**before, "RentPrice": 2100.0}])._repr_html_()
    assert "<ins>EUR 2,100</ins>" in page
    assert "(+EUR 100, +5.0%)" in page


# --------------------------------------------------------------------------- text


def test_listing_text_is_escaped() -> None:
    evil = "<script>alert('x')</script> Smith & Sons"
    page = plan_of([listing(1)], [listing(1, Description=evil, Address="1 <b>Main</b> St")])
    html = page._repr_html_()
    assert "<script>alert" not in html
    assert "&lt;script&gt;" in html
    assert "Smith &amp; Sons" in html
    assert "<b>Main</b>" not in html


def test_a_long_text_change_is_shown_word_by_word() -> None:
    after = LONG.replace("a fenced backyard", "a large fenced backyard").replace(
        "Showings by appointment.", "Open house Sunday."
    )
    page = plan_of([listing(1, Description=LONG)], [listing(1, Description=after)])._repr_html_()
    update = section(page, "update")
    assert "<ins>large </ins>" in update
    assert "<del>Showings by appointment.</del>" in update
    assert "<ins>Open house Sunday.</ins>" in update
    # The words far from any change are elided, so the change is what one sees.
    assert "Well-kept" not in update
    assert "…" in update


def test_word_diff_gives_the_text_back() -> None:
    pieces = word_diff("the red house on the hill", "the blue house on the hill")
    before = "".join(p.text for p in pieces if p.kind != "inserted")
    after = "".join(p.text for p in pieces if p.kind != "deleted")
    assert before == "the red house on the hill"
    assert after == "the blue house on the hill"
    assert [p.text for p in pieces if p.kind == "deleted"] == ["red"]
    assert [p.text for p in pieces if p.kind == "inserted"] == ["blue"]


# --------------------------------------------------------------------------- structured


def test_extension_column_is_diffed_key_by_key() -> None:
    before = listing(1, ExtensionColumn={"Pool": "Yes", "View": "Lake"})
    after = listing(1, ExtensionColumn={"Pool": "No", "Garage": "2 cars"})
    update = section(plan_of([before], [after])._repr_html_(), "update")
    assert "<ins>+ Garage: 2 cars</ins>" in update
    assert "Pool: <del>Yes</del>" in update
    assert "Pool: <ins>No</ins>" in update
    # A key the sheet leaves out is kept (merged by key), so it is no change.
    assert "View" not in update


def test_a_removed_extension_key_is_struck() -> None:
    cells = change_cells(
        Change("ExtensionColumn", {"Pool": "Yes", "View": "Lake"}, {"Pool": "Yes"})
    )
    assert "<del>View: Lake</del>" in cells.before
    assert "<del>View</del> removed" in cells.after
    assert "Pool" not in cells.after
    changes = key_diff({"a": 1, "b": 2}, {"b": 3, "c": 4})
    assert [(c.kind, c.key) for c in changes] == [
        ("removed", "a"),
        ("changed", "b"),
        ("added", "c"),
    ]


def test_images_added_and_removed() -> None:
    old = ["https://img.example/1/1.jpg", "https://img.example/1/2.jpg"]
    new = ["https://img.example/1/2.jpg", "https://img.example/1/3.jpg"]
    update = section(
        plan_of([listing(1, Images=old)], [listing(1, Images=new)])._repr_html_(), "update"
    )
    assert "<ins>+ https://img.example/1/3.jpg</ins>" in update
    assert "<del>https://img.example/1/1.jpg</del>" in update
    assert "1 unchanged" in update
    assert list_diff(old, new).kept == 1


# --------------------------------------------------------------------------- drift, bar, sections


def test_days_on_market_drift_is_folded_away() -> None:
    before = [listing(1, DaysOnMarket=10), listing(2, DaysOnMarket=10)]
    after = [listing(1, DaysOnMarket=17, SalePrice=440000.0), listing(2, DaysOnMarket=17)]
    page = plan_of(before, after, compare_days_on_market=True)._repr_html_()
    update = section(page, "update")
    assert "SalePrice" in update
    assert "DaysOnMarket" not in update
    assert "M2" not in update  # a listing whose only change is its days on market
    drift = section(page, "drift")
    assert "<details class='eb-section' data-action='drift'>" in page  # closed
    assert "<span class='eb-muted'>(2)</span>" in drift
    assert "1 of them change nothing else" in drift
    assert "M1" in drift
    assert "M2" in drift


def test_the_summary_bar_counts_by_action() -> None:
    before = [listing(n) for n in range(1, 6)]
    after = [listing(1, SalePrice=1.0), listing(2), listing(3), listing(6), listing(7, Status="?")]
    plan = plan_of(before, after, delete_missing=True, max_delete_fraction=1)
    page = plan._repr_html_()
    bar = page[page.index("eb-bar") : page.index("</div>", page.index("eb-bar"))]
    for name, count in plan.counts().items():
        if count:
            assert f"eb-chip eb-{name}' data-count='{count}'" in bar


def test_invalid_rows_name_their_row_and_key() -> None:
    plan = plan_of([listing(1)], [listing(1), listing(7, Status="Gone")])
    invalid = section(plan._repr_html_(), "invalid")
    assert "M7" in invalid
    assert "Status" in invalid
    assert ">3</td>" in invalid  # its row in the sheet


def test_a_filtered_view() -> None:
    before = [listing(1), listing(2)]
    after = [listing(1, SalePrice=1.0, Bedrooms=5), listing(2, Bedrooms=6), listing(3)]
    plan = plan_of(before, after)
    prices = plan.view(action="update", field="Price")._repr_html_()
    assert "SalePrice" in prices
    assert "Bedrooms" not in prices
    assert "M2" not in prices
    assert "data-action='create'" not in prices
    creates = plan.view(action="create")._repr_html_()
    assert "data-action='create'" in creates
    assert "data-action='update'" not in creates
    with pytest.raises(ValueError, match="'Colour' is no listing field"):
        plan.view(field="Colour")
    with pytest.raises(ValueError, match="'upsert' is not one of"):
        plan.view(action="upsert")


def test_the_view_takes_the_theme_colours() -> None:
    page = plan_of([listing(1)], [listing(1, SalePrice=1.0)])._repr_html_()
    assert "var(--jp-layout-color2" in page
    assert "var(--jp-success-color1" in page
    assert "color-mix(" in page
    assert not re.search(r"background:\s*#(?:fff|ffffff|fff3b0)\b", page)


# --------------------------------------------------------------------------- cleanup


def cleanup_remote() -> pd.DataFrame:
    return remote_frame(
        listing(1, Status="Sold", DaysOnMarket=5),
        listing(2, DaysOnMarket=200),
        listing(3, DaysOnMarket=3),
        *(listing(n, DaysOnMarket=n) for n in range(4, 21)),
    )


def test_a_cleanup_names_its_rule_in_words(tmp_path: Path) -> None:
    plan = plan_cleanup(cleanup_remote(), status=("Sold",), min_days_on_market=180)
    page = plan._repr_html_()
    assert "Cleanup: Sold, or on the market 180 days or more" in page
    assert "SyncPlan by" not in page
    assert "where(frame)" not in page
    assert plan.notes[0] == "cleanup selects: Sold, or on the market 180 days or more"
    again = SyncPlan.load(plan.save(tmp_path / "cleanup.json"))
    assert "Cleanup: Sold, or on the market 180 days or more" in again._repr_html_()


def test_a_cleanup_by_filter_is_named_by_its_label() -> None:
    plan = plan_cleanup(
        cleanup_remote(),
        status=None,
        where=lambda f: f["ID"] == 3,
        where_label="gone from this week's export",
    )
    assert "Cleanup: Gone from this week&#x27;s export" in plan._repr_html_()
    unnamed = plan_cleanup(cleanup_remote(), status=("Sold",), where=lambda f: f["ID"] > 0)
    assert "Cleanup: Sold, and chosen by the where= filter" in unnamed._repr_html_()


# --------------------------------------------------------------------------- plots


def test_plan_plot_has_counts_and_price_changes() -> None:
    before = [listing(1, SalePrice=480000.0), listing(2), listing(3)]
    after = [listing(1, SalePrice=465000.0), listing(2, SalePrice=500000.0), listing(3), listing(4)]
    figure = plan_of(before, after).plot()
    counts, prices = figure.axes
    assert [t.get_text() for t in counts.get_yticklabels()][:3] == ["create", "update", "delete"]
    assert [p.get_width() for p in counts.patches][:2] == [1, 2]
    widths = sorted(round(abs(p.get_width()), 1) for p in prices.patches)
    assert widths == [3.1, 11.1]
    colors = {round(p.get_width(), 1): p.get_facecolor() for p in prices.patches}
    assert colors[-3.1] != colors[11.1]  # a cut and a rise told apart
    labels = [t.get_text() for t in prices.texts]
    assert "−$15,000" in labels
    assert "+$50,000" in labels


def test_cleanup_plot_shows_days_on_market_and_the_threshold(tmp_path: Path) -> None:
    remote = cleanup_remote()
    plan = plan_cleanup(remote, status=("Sold",), min_days_on_market=180)
    figure = plan.plot()
    (ax,) = figure.axes
    assert [line.get_xdata()[0] for line in ax.lines] == [180.0]
    assert "Sold, or on the market 180 days or more" in ax.get_title()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["kept (18)", "deleted (2)"]
    loaded = SyncPlan.load(plan.save(tmp_path / "cleanup.json"))
    with pytest.raises(ValueError, match=r"plan.plot\(remote=listings\)"):
        loaded.plot()
    assert loaded.plot(remote=remote).axes[0].get_legend() is not None


def test_plot_without_matplotlib_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=re.escape("pip install 'estatebot[plot]'")):
        plan_of([listing(1)], [listing(1, SalePrice=1.0)]).plot()


# --------------------------------------------------------------------------- apply report


def report_of(retry_call: str | None) -> ApplyReport:
    outcomes = [
        OpOutcome("update", "DONE1", 2, 1, "done", 200, "", 1, 12.0),
        OpOutcome("update", "BAD1", 3, 2, "failed", 500, "internal <error> & more", 3, 40.0),
        OpOutcome("create", "DONE2", 4, 3, "done", 200, "", 1, 11.0),
        *(OpOutcome("none", f"SAME{n}", 10 + n, 10 + n, "unchanged") for n in range(5)),
    ]
    return ApplyReport(frame=outcomes_frame(outcomes), retry_call=retry_call)


def test_the_report_shows_failures_first_and_unchanged_as_a_count() -> None:
    call = "plan.apply(client, 'SN-1', journal='/tmp/run/sync.journal')"
    page = report_of(call)._repr_html_()
    assert page.index("BAD1") < page.index("DONE1")
    assert "internal &lt;error&gt; &amp; more" in page
    assert ">500</td>" in page
    assert "SAME0" not in page
    assert "5 listings unchanged" in page
    assert f"<code class='eb-retry-call'>{call.replace(chr(39), '&#x27;')}</code>" in page
    assert "the 2 operations done are skipped, the 1 not done are sent again" in page


def test_a_listing_changed_during_the_apply_is_not_offered_the_same_retry() -> None:
    outcomes = [
        OpOutcome("update", "EDITED1", 2, 1, "changed during apply", None, "", 0, 0.0),
        OpOutcome("update", "BAD1", 3, 2, "failed", 500, "internal error", 3, 40.0),
    ]
    call = "plan.apply(client, 'SN-1', journal='/tmp/run/sync.journal')"
    page = ApplyReport(frame=outcomes_frame(outcomes), retry_call=call)._repr_html_()
    assert page.index("EDITED1") < page.index("eb-retry-call")  # listed with what was not done
    assert "1 listing was changed on the service during the apply" in page
    assert "pull and plan again" in page
    plain = report_of(call)._repr_html_()
    assert "changed on the service" not in plain


def test_a_report_without_a_journal_says_how_to_go_on() -> None:
    page = report_of(None)._repr_html_()
    assert "kept no journal" in page
    assert "plan again" in page


# --------------------------------------------------------------------------- progress


def test_a_bar_with_failures_ends_in_the_warning_colour() -> None:
    bar = notebook_tqdm(total=33, disable=False)
    bar.update(33)
    finish_bar(bar, failed=7, total=33)
    assert bar.container.children[1].bar_style == "warning"
    everything = notebook_tqdm(total=3, disable=False)
    everything.update(3)
    finish_bar(everything, failed=3, total=3)
    assert everything.container.children[1].bar_style == "danger"
    fine = notebook_tqdm(total=3, disable=False)
    fine.update(3)
    finish_bar(fine, failed=0, total=3)
    assert fine.container.children[1].bar_style == "success"


def test_a_notebook_bar_takes_its_total_once_known() -> None:
    # Made without a total (a pull before page 1), the widget is a 20-pixel block, always full.
    bar = notebook_tqdm(total=None, disable=False)
    widget = bar.container.children[1]
    assert widget.layout.width == "20px"
    set_total(bar, 21)
    bar.update(7)
    bar.refresh()  # drawn now, not at the next interval
    assert (widget.max, widget.value, bar.total) == (21, 7, 21)
    assert widget.layout.width is None
    assert widget.bar_style == ""
    # A total that grows (the read learns its columns) moves the widget's maximum too.
    grown = notebook_tqdm(total=4, disable=False)
    set_total(grown, 34)
    grown.update(10)
    grown.refresh()
    assert (grown.container.children[1].max, grown.container.children[1].value) == (34, 10)


def test_a_terminal_bar_with_failures_ends_yellow(capsys: pytest.CaptureFixture[str]) -> None:
    bar = terminal_tqdm(total=4, disable=False, file=sys.stderr)
    bar.update(4)
    finish_bar(bar, failed=1, total=4)
    assert "\x1b[33m" in capsys.readouterr().err
