"""How the filings write numbers: the strings truth rows cite are built by these."""

from __future__ import annotations

import datetime as dt

from data.synth import fmt


def test_zh_numeral_writes_chapter_and_meeting_numbers():
    assert [fmt.zh_numeral(n) for n in (1, 3, 10, 11, 19, 20, 21, 35, 99)] == [
        "一",
        "三",
        "十",
        "十一",
        "十九",
        "二十",
        "二十一",
        "三十五",
        "九十九",
    ]
    assert fmt.zh_numeral(100) == "一"  # filler sections past 99 wrap around instead of failing


def test_amounts_and_dates_in_filing_style():
    assert fmt.accounting(-12345) == "(12,345)" and fmt.accounting(12345) == "12,345"
    assert fmt.trim(4.10, 3) == "4.1" and fmt.trim(5.339, 3) == "5.339" and fmt.trim(4.0, 2) == "4"
    assert fmt.yi(3_239_006_323.23) == "32.39亿元"
    day = dt.date(2022, 6, 5)
    assert (fmt.date_cn(day), fmt.date_slash(day), fmt.date_en(day)) == (
        "2022年6月5日",
        "2022/6/5",
        "June 5, 2022",
    )
