"""How filings write numbers and dates. Every string a truth row cites is built here."""

from __future__ import annotations

import datetime as dt


def grouped(value: float, decimals: int = 2) -> str:
    """3239006323.23 -> '3,239,006,323.23' (the 元 tables of an A-share report)."""
    return f"{value:,.{decimals}f}"


def accounting(value: float, decimals: int = 0) -> str:
    """US statement style: negatives in parentheses, '(12,345)'."""
    text = f"{abs(value):,.{decimals}f}"
    return f"({text})" if value < 0 else text


def yi(value_yuan: float, decimals: int = 2) -> str:
    """元 -> '32.39亿元'."""
    return f"{value_yuan / 1e8:,.{decimals}f}亿元"


def pct(value: float, decimals: int = 2) -> str:
    return f"{value:.{decimals}f}%"


def date_cn(day: dt.date) -> str:
    """2022-06-15 -> '2022年6月15日' (no zero padding, as A-share announcements write it)."""
    return f"{day.year}年{day.month}月{day.day}日"


def date_slash(day: dt.date) -> str:
    """The SSE table style, '2022/6/15'."""
    return f"{day.year}/{day.month}/{day.day}"


def date_cn_padded(day: dt.date) -> str:
    """2022-06-05 -> '2022年06月05日' (some issuers pad month and day)."""
    return f"{day.year}年{day.month:02d}月{day.day:02d}日"


def date_iso(day: dt.date) -> str:
    """'2022-06-15', as some announcements' date tables print it."""
    return day.isoformat()


def weekday_cn(day: dt.date) -> str:
    """2022-06-15 -> '星期三', printed after a date in parentheses: '2022年6月15日（星期三）'."""
    return "星期" + "一二三四五六日"[day.weekday()]


def date_en(day: dt.date) -> str:
    return f"{day.strftime('%B')} {day.day}, {day.year}"


def zh_numeral(n: int) -> str:
    """1 -> '一', 12 -> '十二', 35 -> '三十五': chapter, section and meeting numbers (1..99; larger wrap around)."""
    digits = "零一二三四五六七八九十"
    n = (n - 1) % 99 + 1  # numbering past 99 only happens in filler sections, where it is decoration
    if n <= 10:
        return digits[n]
    if n < 20:
        return "十" + digits[n - 10]
    return digits[n // 10] + "十" + (digits[n % 10] if n % 10 else "")


def trim(value: float, decimals: int) -> str:
    """Shortest plain form up to `decimals` places: 4.10 -> '4.1', 5.339 -> '5.339', 4.0 -> '4'."""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return text or "0"
