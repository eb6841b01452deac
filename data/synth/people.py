"""Invented people and holders for the A-share filings: executives with gender, top-ten shareholders."""

from __future__ import annotations

import random

_SURNAMES = "王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎余潘杜戴夏钟汪田任姜范方石姚谭廖邹熊金陆郝孔白崔康毛邱秦江史顾侯邵孟龙万段雷钱汤尹黎易常武乔贺赖龚文"
_MALE = "伟强磊军勇杰涛明超刚平辉鹏华飞鑫波斌宇浩凯健俊帆帅旭宁龙林峰建国志东海"
_FEMALE = "芳娜敏静丽艳娟霞秀玲燕红梅琳雪莉颖婷慧洁萍岚兰晶倩蓉"
TITLES = [
    "董事长",
    "副董事长、行长",
    "执行董事、副行长",
    "副行长",
    "董事会秘书",
    "首席风险官",
    "首席财务官",
    "职工监事",
    "监事长",
    "独立董事",
    "非执行董事",
    "首席信息官",
    "行长助理",
    "审计部总经理",
]
_HOLDER_KINDS = [
    "国有资本投资运营有限公司",
    "投资控股集团有限公司",
    "集团有限公司",
    "实业有限公司",
    "财政局",
    "资产管理有限公司",
]
_FIXED_HOLDERS = [
    "香港中央结算有限公司",
    "中国证券金融股份有限公司",
    "中央汇金资产管理有限责任公司",
    "全国社保基金一零三组合",
]


def person_name(rng: random.Random, female: bool, taken: set) -> str:
    pool = _FEMALE if female else _MALE
    while True:
        given = rng.choice(pool) + (rng.choice(pool) if rng.random() < 0.6 else "")
        name = rng.choice(_SURNAMES) + given
        if name not in taken:
            taken.add(name)
            return name


def executives(rng: random.Random, n_female: int, n_total: int) -> list[dict]:
    """Board, supervisors and senior managers; exactly `n_female` women, shuffled among men."""
    taken: set = set()
    genders = [True] * n_female + [False] * (n_total - n_female)
    rng.shuffle(genders)
    people = []
    for i, female in enumerate(genders):
        title = TITLES[i] if i < len(TITLES) else rng.choice(["独立董事", "监事", "非执行董事"])
        people.append(
            {
                "name": person_name(rng, female, taken),
                "title": title,
                "gender": "女" if female else "男",
                "age": rng.randint(38, 66),
            }
        )
    return people


def shareholders(rng: random.Random, city: str, largest_pct: float, total_shares: int) -> list[dict]:
    """Top-ten holders, largest first; holding ratios in percent (2 decimals) and share counts."""
    short_city = city.removesuffix("市")
    names = [f"{short_city}市{_HOLDER_KINDS[0]}"]
    pool = [
        f"{short_city}{rng.choice('东西南北新')}{rng.choice('城港湖江')}{kind}" for kind in _HOLDER_KINDS[1:]
    ]
    names += rng.sample(pool, 4) + _FIXED_HOLDERS
    names.append(f"{short_city}市{rng.choice(['城市建设', '交通', '能源'])}投资有限公司")
    ratios = [largest_pct]
    for _ in range(9):
        ratios.append(round(ratios[-1] * rng.uniform(0.35, 0.9), 2))
    ratios = [max(r, 0.3) for r in ratios]
    ratios = sorted(ratios, reverse=True)
    ratios[0] = largest_pct
    return [
        {"name": n, "pct": r, "shares": int(total_shares * r / 100)}
        for n, r in zip(names, ratios, strict=True)
    ]
