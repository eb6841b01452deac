"""A count the answer states is a key fact when the gold states one ("共审验3家公司", "共有11家",
"a total of 4 companies"): the right codes under a wrong total is a wrong answer. Numbers that are
not counts of companies (years, percents, amounts, ranks, the size of the whole knowledge base)
never trip the rule."""

import pytest

from evaluate.matching.counts import find_counts
from evaluate.matching.final_match import final_match
from evaluate.matching.quantities import fold

AUDIT_Q = "针对中国A股市场，在你的ESG报告知识库中2021年审验客户数量最多的第三方审验机构及其审验的公司股票代码是什么？"
AUDIT_GOLD = (
    "根据2021年第三方审验数据，审验客户数量最多的机构是普华永道中天会计师事务所(特殊普通合伙)，"
    "共审验3家公司，股票代码为：601077、601988、601998"
)
AUDIT_SYMBOLS = ["601077", "601988", "601998", "600000", "600015"]
FIRM = "普华永道中天会计师事务所(特殊普通合伙)"

TIE_Q = "针对中国A股市场，请根据你知识库中2022年的数据，给出ESG综合得分不低于第3名分数线的全部公司股票代码及得分（含并列）。"
TIE_CODES = [
    "000001",
    "002966",
    "600000",
    "600576",
    "600919",
    "601166",
    "601398",
    "601577",
    "601825",
    "601939",
]
TIE_GOLD = f"达到第3名分数线及以上的公司共有11家：601288（1.00）；{'、'.join(TIE_CODES)}（均为0.8833）。"
TIE_SYMBOLS = ["601288", *TIE_CODES, "601988"]

US_Q = "Based on US stock market, which companies had a current ratio above 2 in 2022? Provide their stock symbols."
US_GOLD = (
    "Based on 2022 data, a total of 4 companies had a current ratio above 2: [AEHR], [FCEL], [LAKE], [NSSC]"
)
US_SYMBOLS = ["AEHR", "FCEL", "LAKE", "NSSC", "BBY", "KE"]


def verdict(question, gold, answer, symbols):
    result = final_match(question, gold, answer, symbols)
    return result.correct if result.decided else "undecided"


@pytest.mark.parametrize(
    "answer, expected",
    [
        (f"{FIRM}，共审验8家公司，股票代码为：601077、601988、601998", False),  # the case of the report
        (f"{FIRM}，共审验三家公司：601077、601988、601998", True),
        (f"{FIRM}，审验的公司为601077、601988、601998", True),  # no count stated: the codes decide
        (f"{FIRM}审验客户最多，共审验3家公司（知识库共有15家）：601077、601988、601998", True),
        # a total of something else beside the gold's count: the judge reads which is the answer
        (f"2021年共有5家审验机构，{FIRM}审验客户最多（3家）：601077、601988、601998", "undecided"),
        (
            f"知识库中共有5家审验机构，{FIRM}审验客户最多（3家）：601077、601988、601998",
            True,
        ),  # the whole set
        (f"{FIRM}合计审验了4家公司：601077、601988、601998", False),
        (f"2021年{FIRM}共审验3家公司（占审验总数的37.5%），合计收费120万元：601077、601988、601998", True),
    ],
)
def test_a_wrong_total_beside_the_right_codes_is_wrong(answer, expected):
    assert verdict(AUDIT_Q, AUDIT_GOLD, answer, AUDIT_SYMBOLS) == expected


@pytest.mark.parametrize(
    "answer, expected",
    [
        (TIE_GOLD, True),
        (TIE_GOLD.replace("共有11家", "共有22家"), False),
        (TIE_GOLD.replace("共有11家", "共11只股票"), True),
        (TIE_GOLD.replace("共有11家", "共有十二家"), False),  # Chinese numerals too
    ],
)
def test_tied_list_with_a_count(answer, expected):
    assert verdict(TIE_Q, TIE_GOLD, answer, TIE_SYMBOLS) == expected


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("A total of 5 companies: AEHR, FCEL, LAKE, NSSC.", False),
        ("5 companies qualify: AEHR, FCEL, LAKE and NSSC", False),
        ("4 companies qualify: AEHR, FCEL, LAKE and NSSC", True),
        ("Of the 12 companies in the knowledge base, these qualify: AEHR, FCEL, LAKE, NSSC", True),
        ("AEHR, FCEL, LAKE, NSSC (4 in total)", True),
    ],
)
def test_english_totals(answer, expected):
    assert verdict(US_Q, US_GOLD, answer, US_SYMBOLS) == expected


def test_the_size_of_the_knowledge_base_is_not_the_answers_total():
    question = "针对中国A股市场，在你的知识库中2021年有多少家公司的ESG报告参照了GRI《可持续发展报告指南》？"
    gold = "根据2021年GRI标准采用数据，共有7家公司参照了GRI《可持续发展报告指南》"
    codes = "600000、600015、600016、600036、600908、600919、601077"
    symbols = codes.split("、") + ["601128"]
    # seven codes listed under the size of the knowledge base: not a wrong total, left to the judge
    assert verdict(question, gold, f"知识库中共有15家公司，参照GRI的为：{codes}", symbols) == "undecided"
    assert verdict(question, gold, f"知识库中共有15家公司，其中共有7家参照了GRI：{codes}", symbols) is True
    assert verdict(question, gold, f"共有8家公司参照了GRI：{codes}", symbols) is False
    assert (
        verdict(question, gold, f"知识库中共有8家公司参照了GRI：{codes}", symbols) is False
    )  # a total after all


def test_a_ranked_top_n_is_not_a_count_statement():
    question = "Based on US stock market, What are the stock symbols (tickers) of the top three companies ranked by total assets in 2021?"
    gold = "Based on 2021 data, the top 3 companies by total assets are: [PLAY], [DY], [CMCO]"
    symbols = ["PLAY", "DY", "CMCO", "BBY"]
    assert (
        verdict(question, gold, "Among the 12 companies, the top three are PLAY, DY and CMCO", symbols)
        is True
    )
    assert verdict(question, gold, "The 3 companies with the most assets: PLAY, DY, CMCO", symbols) is True


def test_a_count_question_answered_with_the_wrong_total_says_so():
    question = "针对中国A股市场，在你的知识库中2022年哪个月份召开股东大会的公司最多？"
    gold = "根据2022年股东大会时间分布，6月召开股东大会的公司最多，共有6家公司，证券代码为：600016、601288、601328、601398、601528、601577"
    symbols = ["600016", "601288", "601328", "601398", "601528", "601577", "600000"]
    codes = "600016、601288、601328、601398、601528、601577"
    result = final_match(question, gold, f"6月最多，共有7家公司：{codes}", symbols)
    assert result.decided and result.correct is False and "7" in result.reason and "6" in result.reason
    assert final_match(question, gold, f"6月最多，共有6家公司：{codes}", symbols).correct is True


@pytest.mark.parametrize(
    "text, values",
    [
        ("共审验8家公司", [(8, True)]),
        ("共有22家", [(22, True)]),
        ("合计3只股票", [(3, True)]),
        ("共有十家公司", [(10, True)]),
        ("共有4个上市公司", [(4, True)]),
        ("a total of 5 companies", [(5, True)]),
        ("5 banks met the threshold", [(5, True)]),
        ("其中7家参照了GRI", [(7, False)]),  # a count, not a total
        ("of the 15 companies, 4 firms", [(15, False), (4, True)]),
        ("前3家公司", []),  # a rank
        ("the top 3 companies", []),
        ("2021年共有", []),  # a year
        ("共计派发现金红利1000万元", []),  # an amount
        ("共有3.5%的公司", []),  # a percent
        ("共有8个信息项", []),  # counts of things other than companies
        ("公共关系3家", [(3, False)]),  # 公共 is not 共
        ("知识库中共有15家公司，其中7家参照了GRI", [(15, False), (7, False)]),  # the whole set
        ("There are 12 companies in the knowledge base; 4 companies qualify", [(12, False), (4, True)]),
        ("共15家公司中，有3家", [(15, False), (3, False)]),
    ],
)
def test_find_counts(text, values):
    assert [(c.value, c.total) for c in find_counts(fold(text))] == values
