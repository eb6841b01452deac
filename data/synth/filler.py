"""Running text: the governance, risk and business prose that makes up most of a real filing.

Sentences are assembled from phrase banks with a document's own random stream, so the same seed gives
the same text. Numbers in the filler are deliberately plausible (growth rates, counts): they are noise a
reader must not confuse with the asked value.
"""

from __future__ import annotations

import random

from .fmt import zh_numeral

_ZH_SUBJECTS = [
    "本行",
    "公司",
    "本集团",
    "董事会",
    "管理层",
    "本行各分支机构",
    "风险管理委员会",
    "审计委员会",
]
_ZH_VERBS = ["持续完善", "进一步加强", "稳步推进", "深入落实", "积极优化", "全面提升", "不断健全", "扎实开展"]
_ZH_OBJECTS = [
    "全面风险管理体系",
    "公司治理结构",
    "内部控制制度",
    "数字化转型工作",
    "普惠金融服务",
    "绿色金融业务",
    "资产负债管理",
    "流动性风险监测",
    "信用风险识别与计量",
    "消费者权益保护工作",
    "反洗钱管理",
    "关联交易管理",
    "信息披露质量",
    "人才队伍建设",
    "客户服务体系",
    "科技创新能力",
]
_ZH_TAILS = [
    "，各项监管指标均符合要求",
    "，服务实体经济质效不断提升",
    "，为高质量发展奠定坚实基础",
    "，取得了积极成效",
    "，有效防范化解各类风险",
    "，经营发展稳中有进",
    "，推动各项业务协调发展",
]
_ZH_NUMBERS = [
    "报告期内，{x}较上年增长{p}%",
    "截至报告期末，{x}余额较年初增加{p}%",
    "全年累计{x}同比提高{p}个百分点",
    "{x}占比{p}%，较上年末下降{q}个百分点",
]
_ZH_METRICS = [
    "小微企业贷款",
    "个人住房贷款",
    "对公存款",
    "零售客户数",
    "手机银行月活用户",
    "绿色信贷",
    "中间业务收入",
    "不良贷款率",
    "拨备覆盖率",
    "理财产品规模",
]
ZH_SECTIONS = [
    "公司治理",
    "风险管理",
    "内部控制",
    "经营情况讨论与分析",
    "业务发展情况",
    "重要事项",
    "发展战略",
    "信息科技建设",
    "人力资源管理",
    "消费者权益保护",
    "普惠金融",
    "关联交易情况",
    "风险因素",
]

_EN_SUBJECTS = [
    "The Company",
    "Management",
    "Our Board of Directors",
    "We",
    "The Audit Committee",
    "Our business",
]
_EN_VERBS = [
    "continued to strengthen",
    "further improved",
    "invested in",
    "reviewed",
    "expanded",
    "monitored",
]
_EN_OBJECTS = [
    "its supply chain",
    "internal control over financial reporting",
    "its distribution network",
    "cybersecurity programs",
    "working capital management",
    "its product portfolio",
    "customer retention initiatives",
    "manufacturing capacity",
    "pricing discipline",
    "its IT systems",
]
_EN_TAILS = [
    ", which we believe positions us well for future growth",
    " during the fiscal year",
    " in response to changing market conditions",
    ", consistent with our long-term strategy",
    ", although results may vary from period to period",
]
_EN_NUMBERS = [
    "{x} increased {p}% compared with the prior year",
    "{x} decreased {p}% year over year",
    "approximately {p}% of {x} was attributable to our largest customers",
]
_EN_METRICS = [
    "Selling, general and administrative expense",
    "Freight cost",
    "Capital expenditure",
    "Headcount",
    "E-commerce sales",
    "Backlog",
    "Same-store sales",
    "Warranty expense",
]
EN_SECTIONS = [
    "Risk Factors",
    "Properties",
    "Legal Proceedings",
    "Market for Registrant's Common Equity",
    "Quantitative and Qualitative Disclosures About Market Risk",
    "Controls and Procedures",
    "Executive Compensation",
    "Certain Relationships and Related Transactions",
    "Human Capital",
    "Competition",
    "Government Regulation",
    "Cybersecurity",
]
_RISKS = [
    "Our results could be adversely affected by",
    "We may be unable to manage",
    "We face risks related to",
    "Changes in laws and regulations could increase",
    "A disruption of our information systems could harm",
]
_RISK_OBJ = [
    "inflation and rising interest rates",
    "supply chain disruptions",
    "the loss of key personnel",
    "competition in our markets",
    "fluctuations in foreign currency exchange rates",
    "the availability of credit",
    "product liability claims",
]


def _pct(rng: random.Random) -> str:
    return f"{rng.uniform(0.3, 35):.2f}"


def zh_sentence(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return (
            rng.choice(_ZH_NUMBERS).format(
                x=rng.choice(_ZH_METRICS), p=_pct(rng), q=f"{rng.uniform(0.1, 3):.2f}"
            )
            + "。"
        )
    return (
        rng.choice(_ZH_SUBJECTS)
        + rng.choice(_ZH_VERBS)
        + rng.choice(_ZH_OBJECTS)
        + rng.choice(_ZH_TAILS)
        + "。"
    )


def en_sentence(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.25:
        return rng.choice(_EN_NUMBERS).format(x=rng.choice(_EN_METRICS), p=_pct(rng)).capitalize() + "."
    if roll < 0.45:
        return f"{rng.choice(_RISKS)} {rng.choice(_RISK_OBJ)}."
    return f"{rng.choice(_EN_SUBJECTS)} {rng.choice(_EN_VERBS)} {rng.choice(_EN_OBJECTS)}{rng.choice(_EN_TAILS)}."


def zh_paragraph(rng: random.Random, low: int = 3, high: int = 7) -> str:
    return "".join(zh_sentence(rng) for _ in range(rng.randint(low, high)))


def en_paragraph(rng: random.Random, low: int = 3, high: int = 7) -> str:
    return " ".join(en_sentence(rng) for _ in range(rng.randint(low, high)))


class Filler:
    """Writes a heading now and then and paragraphs of running text in the document's language."""

    def __init__(self, rng: random.Random, language: str, numbered: bool = True):
        self.rng, self.language, self.count = rng, language, 0
        self.numbered = numbered

    def __call__(self, writer) -> None:
        rng = self.rng
        if rng.random() < 0.12:
            self.count += 1
            if self.language == "zh":
                title = rng.choice(ZH_SECTIONS)
                writer.heading(f"（{zh_numeral(self.count)}）{title}" if self.numbered else title, size=11.5)
            else:
                writer.heading(rng.choice(EN_SECTIONS), size=11.5)
        writer.paragraph(zh_paragraph(rng) if self.language == "zh" else en_paragraph(rng))
