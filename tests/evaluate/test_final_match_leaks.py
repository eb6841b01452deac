"""Answers the matcher once passed or left to a judge (issue 21): hedged values, no company where
companies are asked, stuffed candidate lists, and count claims that contradict the companies listed.
Each is decided wrong by the matcher; the honest answers beside them keep their verdict."""

import pytest

from evaluate.matching.final_match import final_match


def verdict(question, gold, answer, symbols=()):
    result = final_match(question, gold, answer, list(symbols))
    assert result.reason
    return result.correct if result.decided else "undecided"


# ---- hedging: several alternatives for one asked value ------------------------------------------
COUNT_Q = "针对中国A股市场，在你的知识库中2021年有多少家办公地址在深圳的公司？"
COUNT_GOLD = "根据2021年数据分析，办公地址在深圳的公司共有1家。"
STD_Q = "针对中国A股市场，请你计算你知识库中2021年各公司资本充足率的总体标准差是多少？"
STD_GOLD = "根据2021年数据分析，各公司资本充足率的总体标准差为1.7935个百分点。"
US_COUNT_Q = "Based on US stock market, how many companies had a current ratio above 2 in 2022?"
US_COUNT_GOLD = "Based on 2022 data, a total of 4 companies had a current ratio above 2."


@pytest.mark.parametrize(
    "question, gold, answer, expected",
    [
        (COUNT_Q, COUNT_GOLD, "共有1家或2家或3家", False),  # the case of the report
        (COUNT_Q, COUNT_GOLD, "共有1家、2家或3家", False),
        (COUNT_Q, COUNT_GOLD, "共有1家", True),
        (STD_Q, STD_GOLD, "总体标准差为1.7935或3.2个百分点", False),  # the case of the report
        (STD_Q, STD_GOLD, "总体标准差约为1.7935个百分点或者约3.2个百分点", False),
        (STD_Q, STD_GOLD, "总体标准差约1.79或1.5个百分点", False),
        (STD_Q, STD_GOLD, "总体标准差为1.7935个百分点", True),
        (US_COUNT_Q, US_COUNT_GOLD, "4 or 5 companies", False),
        (US_COUNT_Q, US_COUNT_GOLD, "either 3 or 4 companies", False),
        (US_COUNT_Q, US_COUNT_GOLD, "A total of 4 companies.", True),
    ],
)
def test_hedged_values_are_wrong(question, gold, answer, expected):
    assert verdict(question, gold, answer) == expected


def test_hedging_on_an_approximate_number_in_english():
    question = "Based on US stock market, what is the population standard deviation of the gross profit margin in 2021?"
    gold = "Based on 2021 data, the population standard deviation is 1.2 percentage points."
    assert verdict(question, gold, "about 1.2 or 1.5 percentage points") is False
    assert verdict(question, gold, "约1.2或1.5个百分点") is False
    assert verdict(question, gold, "about 1.2 percentage points") is True


def test_one_value_written_two_ways_is_no_hedge():
    growth_q = "针对中国A股市场，请你给出你知识库中2022-2023年资本增长率最快的公司的股票代码和增长率是？"
    growth_gold = "股票代码601229，增长率为-0.14%。"  # a fraction printed with "%": -14%
    assert verdict(growth_q, growth_gold, "601229，增长率为-0.14或-14%", ["601229", "600000"]) is True
    assert verdict(STD_Q, STD_GOLD, "1.7935个百分点或0.017935", []) is True


def test_hedging_between_companies_or_dates_is_wrong():
    question = "针对中国A股市场，请根据你知识库中2021年的数据，股权登记日最早的公司证券代码是什么？"
    gold = "股权登记日最早的公司证券代码为：601528，对应日期为：2022-05-09"
    symbols = ["601528", "600919"]
    assert verdict(question, gold, "601528或600919，日期为2022-05-09", symbols) is False
    assert verdict(question, gold, "601528，日期为2022-05-09或2022-05-10", symbols) is False
    assert verdict(question, gold, "601528，日期为2022-05-09", symbols) is True


def test_or_inside_a_word_is_no_hedge():
    # 或有负债 (contingent liabilities) is one word, not "or"
    assert verdict(STD_Q, STD_GOLD, "总体标准差为1.7935个百分点，与或有负债无关") is True


# ---- an answer naming no company where companies are asked ---------------------------------------
TOP3_Q = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的三家公司股票代码"
TOP3_GOLD = "资本充足率最高的三家公司股票代码分别是：601398、002142、601166。"
TOP3_SYMBOLS = ["601398", "002142", "601166", "002839", "600908", "600000", "600015", "600016"]
US_Q = "Based on US stock market, Which three companies had the highest debt-to-assets ratios in 2021? Provide their stock symbols."
US_GOLD = (
    "Based on 2021 financial data, the companies with highest leverage ratios are: [ARAY], [SAIC], [AMCR]"
)
US_SYMBOLS = ["ARAY", "SAIC", "AMCR", "BBY", "KE"]


@pytest.mark.parametrize(
    "question, gold, answer, symbols",
    [
        (US_Q, US_GOLD, "fake answer 658", US_SYMBOLS),  # the fake model of the report
        (US_Q, US_GOLD, "Array Inc., Science Applications and Amcor", US_SYMBOLS),
        (TOP3_Q, TOP3_GOLD, "工商银行、苏州银行、兴业银行", TOP3_SYMBOLS),
        (TOP3_Q, TOP3_GOLD, "资本充足率最高的三家公司是银行。", TOP3_SYMBOLS),
    ],
)
def test_no_company_named_where_companies_are_asked_is_wrong(question, gold, answer, symbols):
    result = final_match(question, gold, answer, symbols)
    assert result.decided and result.correct is False and "names no code or ticker" in result.reason


def test_no_company_named_where_the_question_asks_a_month_is_not_wrong():
    question = "针对中国A股市场，在你的知识库中2022年哪个月份召开股东大会的公司最多？"
    gold = (
        "6月召开股东大会的公司最多，共有6家公司，证券代码为：600016、601288、601328、601398、601528、601577"
    )
    assert verdict(question, gold, "6月最多，共6家公司", ["600016", "601288", "600000"]) is not False


# ---- stuffed answers: many more companies than asked ---------------------------------------------
def _table(codes):
    return "\n".join(f"{k}. {code}：{20 - k}.00%" for k, code in enumerate(codes, 1))


CANDIDATES = ["601398", "002142", "601166", "002839", "600908", "600000", "600015", "600016"]


@pytest.mark.parametrize(
    "answer, expected",
    [
        (_table(CANDIDATES), False),  # 8 of the candidates, one per line, for "which three"
        ("\n".join(CANDIDATES), False),  # one list of eight
        ("。".join(f"{code}符合条件" for code in CANDIDATES), False),  # one per sentence
        (_table(CANDIDATES) + "\n最高的三家为601398、002142、601166。", True),  # a table, then the answer
        ("601398、002142、601166。其余公司：002839（14.30%）", True),  # one extra, apart from the list
    ],
)
def test_a_stuffed_candidate_list_is_wrong(answer, expected):
    assert verdict(TOP3_Q, TOP3_GOLD, answer, CANDIDATES) == expected


def test_a_stuffed_table_does_not_single_out_one_gold_company():
    question = "针对中国A股市场，在你的知识库中2021年为四大会计师事务所客户的公司中，社会捐赠额最高的公司股票代码是什么？"
    gold = "四大会计师事务所客户中社会捐赠额最高的公司股票代码为：601398"
    assert verdict(question, gold, _table(CANDIDATES), CANDIDATES) is False  # right one on top, never chosen
    assert verdict(question, gold, _table(CANDIDATES) + "\n最高的是601398。", CANDIDATES) is True
    assert verdict(question, gold, "最高的是601398（20%），其次是002142和601166", CANDIDATES) is True


# ---- count claims against the companies listed ---------------------------------------------------
GRI_Q = "针对中国A股市场，在你的ESG报告知识库中2021年GRI标准与第三方审验的关联情况分析：既采用GRI又审验的公司股票代码及数量统计"
GRI_CODES = "600000、600015、601009、601229、601658、601939、601988"
GRI_GOLD = (
    f"既采用GRI标准又经第三方审验的公司有7家，股票代码为{GRI_CODES}；仅采用GRI标准的公司有2家；"
    "仅经第三方审验的公司有1家；两者都未采用的公司有5家"
)
GRI_SYMBOLS = GRI_CODES.split("、") + ["601398", "000001", "600036"]
IMPROVE_Q = "针对中国A股市场，请根据你知识库中的数据，比较2021年和2022年的ESG披露情况，找出改进分最高且大于0的公司；若不足3家，则按实际数量返回。"
IMPROVE_GOLD = "改进分最高且大于0的公司只有601328，新增披露维度为制度建设；其余公司改进分均为0，因此按实际数量仅返回1家公司。"


@pytest.mark.parametrize(
    "answer, expected",
    [
        (GRI_GOLD.replace("有7家", "有15家"), False),  # the case of the report: 15 said, seven listed
        (GRI_GOLD, True),
        (f"既采用GRI又审验的公司共7家：{GRI_CODES}；仅采用GRI的有2家；仅审验的有1家；都未采用的有5家", True),
        (f"{GRI_CODES}，共8家；仅采用GRI的有2家；仅审验的有1家；都未采用的有5家", False),  # a closing count
        (f"{GRI_CODES}，共7家；仅采用GRI的有2家；仅审验的有1家；都未采用的有5家", True),
        # the size of the knowledge base is no claim about the list
        (
            f"知识库共有15家公司，其中既采用GRI又审验的公司有7家：{GRI_CODES}；仅采用GRI的有2家；仅审验的有1家；都未采用的有5家",
            True,
        ),
    ],
)
def test_a_count_introducing_or_closing_a_list_must_match_it(answer, expected):
    assert verdict(GRI_Q, GRI_GOLD, answer, GRI_SYMBOLS) == expected


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("改进分最高且大于0的公司只有601328；其余公司改进分均为0，因此按实际数量仅返回5家公司。", False),
        ("仅返回5家公司：601328", False),  # the case of the report: five said, one listed
        (IMPROVE_GOLD, True),
        ("改进分最高且大于0的公司为601328（共1家）", True),
        # a count of the whole set the answer picks from ("其中": among them) is no claim about the answer
        ("共有15家公司参与比较，其中改进分最高且大于0的只有601328。", True),
    ],
)
def test_a_stated_size_must_match_the_companies_named(answer, expected):
    assert verdict(IMPROVE_Q, IMPROVE_GOLD, answer, ["601328", "600000", "600015"]) == expected


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("5 companies: [AEHR].", False),
        ("A total of 3 companies qualify: AEHR, FCEL, LAKE and NSSC", False),
        ("AEHR, FCEL, LAKE and NSSC (4 companies in total)", True),
        ("AEHR, FCEL, LAKE and NSSC (3 companies in total)", False),
        ("Of the 12 companies in the knowledge base, 4 companies qualify: AEHR, FCEL, LAKE, NSSC", True),
    ],
)
def test_english_count_claims(answer, expected):
    question = "Based on US stock market, which companies had a current ratio above 2 in 2022? Provide their stock symbols."
    gold = "Based on 2022 data, a total of 4 companies had a current ratio above 2: [AEHR], [FCEL], [LAKE], [NSSC]"
    assert verdict(question, gold, answer, ["AEHR", "FCEL", "LAKE", "NSSC", "BBY", "KE"]) == expected


def test_chinese_ge_counts_a_list_too():
    question = "针对中国A股市场，在你的知识库中2021年办公地址发生变更的公司股票代码是？"
    gold = "办公地址发生变更的公司股票代码有：000803、000955。"
    symbols = ["000803", "000955", "600000"]
    assert verdict(question, gold, "共有3个公司：000803、000955", symbols) is False
    assert verdict(question, gold, "共有2个公司：000803、000955", symbols) is True


def test_a_count_claim_beside_a_count_answer_is_checked_too():
    # "how many" with the right number, contradicted by the one code listed after it
    question = "针对中国A股市场，在你的知识库中2021年有多少家公司的ESG报告披露了环境信息？"
    gold = "共有5家公司披露了环境信息"
    assert verdict(question, gold, "共有5家：600000", ["600000", "600015"]) is False
    assert verdict(question, gold, "共有5家公司披露了环境信息，其中600000最完整", ["600000"]) is True


def test_an_english_count_beside_a_list_the_gold_states_no_total_for():
    # the gold names three tickers and no total: only the answer's own list can contradict its count
    assert (
        verdict(US_Q, US_GOLD, "The 5 companies with the highest ratios: ARAY, SAIC, AMCR", US_SYMBOLS)
        is False
    )
    assert (
        verdict(US_Q, US_GOLD, "The 3 companies with the highest ratios: ARAY, SAIC, AMCR", US_SYMBOLS)
        is True
    )


def test_counts_of_other_things_are_no_claims_about_the_list():
    question = "针对中国A股市场，在你的知识库中2021年为四大会计师事务所客户的公司中，社会捐赠额最高的公司股票代码是什么？"
    gold = "社会捐赠额最高的公司股票代码为：601398"
    symbols = ["601398", "600000", "600015"]
    assert verdict(question, gold, "601398（旗下共3家子公司）", symbols) is True
    assert verdict(question, gold, "共有2家审验机构：普华永道、安永；捐赠额最高的是601398", symbols) is True
