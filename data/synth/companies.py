"""Invented listed companies: unique names and tickers within a corpus, none meant to be real.

A-share companies are banks (the MuDABench annual-report questions ask for 资本充足率) with 6-digit
codes on the Shanghai (60x) or Shenzhen (00x) boards; US companies get 2-4 letter tickers.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

# Two-character trade names are drawn from these; real bank names are excluded below.
_ZH_CHARS = "瑞泽川华信丰汇润宁海嘉安恒盛隆通达泰和裕鑫康锦源禾晟融远澄昇璟沣"
_ZH_REAL = {"华夏", "恒丰", "浙商", "兴业", "平安", "瑞丰", "华通", "嘉信", "泰隆", "安信", "通达"}
_ZH_KINDS = ["银行股份有限公司", "农村商业银行股份有限公司", "商业银行股份有限公司"]
# (province prefix, city, districts); the prefix is empty for municipalities.
CITIES = [
    ("广东省", "深圳市", ["福田区", "南山区", "罗湖区"]),
    ("", "北京市", ["西城区", "朝阳区", "东城区"]),
    ("", "上海市", ["浦东新区", "黄浦区", "静安区"]),
    ("浙江省", "杭州市", ["拱墅区", "上城区", "西湖区"]),
    ("江苏省", "苏州市", ["吴江区", "工业园区", "姑苏区"]),
    ("山东省", "青岛市", ["崂山区", "市南区"]),
    ("湖南省", "长沙市", ["岳麓区", "天心区"]),
    ("", "重庆市", ["江北区", "渝中区"]),
    ("四川省", "成都市", ["高新区", "锦江区"]),
]
_ROADS = [
    "滨江路",
    "金融大街",
    "中山南路",
    "人民路",
    "世纪大道",
    "深南大道",
    "解放路",
    "建设路",
    "秦岭路",
    "长江路",
]

_EN_FIRST = [
    "Halvern",
    "Brixton",
    "Corvane",
    "Dunmore",
    "Elstow",
    "Farrow",
    "Glenrock",
    "Harwick",
    "Ironvale",
    "Kestrel",
    "Larkspur",
    "Marlow",
    "Northam",
    "Oakridge",
    "Pendle",
    "Quorra",
    "Redfern",
    "Stellan",
    "Tamber",
    "Ulvery",
    "Varden",
    "Westmere",
    "Yarrow",
    "Zephyrine",
]
_EN_SECOND = [
    "Outdoor",
    "Systems",
    "Foods",
    "Logistics",
    "Medical",
    "Apparel",
    "Energy",
    "Devices",
    "Brands",
    "Industrial",
    "Software",
    "Materials",
]
_EN_SUFFIX = ["Inc.", "Corporation", "Holdings, Inc.", "Group, Inc.", "Co."]
_US_PLACES = [
    ("Delaware", "Austin, Texas"),
    ("Delaware", "Columbus, Ohio"),
    ("Nevada", "Reno, Nevada"),
    ("Delaware", "Denver, Colorado"),
    ("Minnesota", "Minneapolis, Minnesota"),
    ("Delaware", "Charlotte, North Carolina"),
    ("California", "San Jose, California"),
]


@dataclass(frozen=True)
class Company:
    symbol: str
    name: str
    short_name: str
    market: str  # "A" or "US"
    industry: str = ""
    city: tuple = ()  # A-share: (province prefix, city, districts)
    domicile: str = ""  # US: state of incorporation
    headquarters: str = ""  # US: city, state


def make_address(company: Company, rng: random.Random) -> str:
    """A plausible 办公地址 in the company's city."""
    province, city, districts = company.city
    road = rng.choice(_ROADS)
    tail = rng.choice(["", f"{rng.choice('ABC')}座", f"{rng.randint(1, 9)}号楼", "金融中心"])
    return f"{province}{city}{rng.choice(districts)}{road}{rng.randint(1, 1999)}号{tail}"


def _a_share(rng: random.Random, used_symbols: set, used_names: set, index: int) -> Company:
    while True:
        trade = rng.choice(_ZH_CHARS) + rng.choice(_ZH_CHARS)
        if trade[0] != trade[1] and trade not in _ZH_REAL and trade not in used_names:
            break
    used_names.add(trade)
    while True:
        symbol = rng.choice(["600", "601", "603", "000", "001", "002"]) + f"{rng.randint(1, 999):03d}"
        if symbol not in used_symbols:
            break
    used_symbols.add(symbol)
    kind = rng.choice(_ZH_KINDS)
    city = CITIES[index % len(CITIES)] if index < len(CITIES) else rng.choice(CITIES)
    city_short = city[1].removesuffix("市")
    name = f"{city_short}{trade}{kind}"
    short = f"{trade}银行" if kind == _ZH_KINDS[0] else f"{trade}农商行" if "农村" in kind else f"{trade}商行"
    return Company(symbol=symbol, name=name, short_name=short, market="A", industry="银行", city=city)


def _us(rng: random.Random, used_symbols: set, used_names: set) -> Company:
    while True:
        first, second = rng.choice(_EN_FIRST), rng.choice(_EN_SECOND)
        if first not in used_names:
            break
    used_names.add(first)
    candidates = [
        first[:4].upper(),
        first[:3].upper(),
        (first[:2] + second[0]).upper(),
        (first[0] + second[0]).upper(),
        (first[:2] + second[:2]).upper(),
    ]
    symbol = next((c for c in candidates if c not in used_symbols), None)
    while symbol is None or symbol in used_symbols:
        symbol = "".join(rng.choice("ABCDEFGHKLMNPRSTUVWXYZ") for _ in range(rng.randint(2, 4)))
    used_symbols.add(symbol)
    domicile, hq = rng.choice(_US_PLACES)
    return Company(
        symbol=symbol,
        name=f"{first} {second} {rng.choice(_EN_SUFFIX)}",
        short_name=first,
        market="US",
        industry=second,
        domicile=domicile,
        headquarters=hq,
    )


def make_companies(n_us: int, n_a: int, rng: random.Random) -> list[Company]:
    """`n_us` US and `n_a` A-share companies, sorted by symbol; names and tickers unique."""
    used_symbols: set = set()
    used_names: set = set()
    a_share = [_a_share(rng, used_symbols, used_names, i) for i in range(n_a)]
    us = [_us(rng, used_symbols, used_names) for _ in range(n_us)]
    return sorted(us, key=lambda c: c.symbol) + sorted(a_share, key=lambda c: c.symbol)
