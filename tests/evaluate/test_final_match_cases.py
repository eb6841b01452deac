"""Hand-made cases for the final-answer matcher: units, rankings, ties, missing and extra companies."""

import pytest

from evaluate.matching.final_match import final_match

ZH_TOP3 = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的三家公司股票代码及其资本充足率"
ZH_TOP3_GOLD = (
    "资本充足率最高的三家公司分别是：股票代码601398，资本充足率为18.02%；股票代码002142，"
    "资本充足率为15.44%；股票代码601166，资本充足率为14.39%。"
)
ZH_SYMBOLS = ["601398", "002142", "601166", "002839", "600908"]
RANGE_Q = "针对中国A股市场，请你计算你知识库中2021年公司营业总成本的极差是多少？"
RANGE_GOLD = "根据2021年数据分析，知识库中公司营业总成本的极差为172689968830.00元。"
GROWTH_Q = "针对中国A股市场，请你给出你知识库中2022-2023年资本增长率最快三家公司的股票代码和增长率是？"
GROWTH_GOLD = "股票代码601077，增长率为0.02%；股票代码601328，增长率为0.02%；股票代码601229，增长率为-0.14%。"
GROWTH_SYMBOLS = ["601077", "601328", "601229", "002839"]
US_Q = "Based on US stock market, Which three companies had the highest debt-to-assets ratios in 2021? Provide their stock symbols."
US_GOLD = (
    "Based on 2021 financial data, the companies with highest leverage ratios are: [ARAY], [SAIC], [AMCR]"
)
US_SYMBOLS = ["ARAY", "SAIC", "AMCR", "BBY", "KE"]
TIE_Q = "针对中国A股市场，2023年你的知识库中女性高管人数最多的前三档（含并列）公司的股票代码分别是什么？"
TIE_GOLD = "女性高管人数最多的前三档（含并列）公司为：并列第一是002807、601128（各11人）；下一档是002839、002936、601577（各8人）。"
TIE_SYMBOLS = ["002807", "601128", "002839", "002936", "601577", "600000"]


def check(question, gold, answer, symbols, expected):
    result = final_match(question, gold, answer, symbols)
    got = result.correct if result.decided else "undecided"
    assert got == expected, f"{answer!r}: {result}"
    assert result.reason


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("601398（0.1802）、002142（0.1544）、601166（0.1439）", True),  # fractions for percents
        ("601398：18.0%；002142：15.4%；601166：14.4%", True),  # rounded to one decimal
        ("601398：18.02；002142：15.44；601166：14.39", True),  # percent points without %
        ("601398：18.02%；601166：14.39%；002142：15.44%", False),  # ranking in the wrong order
        ("601398：18.02%；002142：15.44%", False),  # missing company
        ("601398：19.02%；002142：15.44%；601166：14.39%", False),  # a wrong number
        ("601398：15.44%；002142：18.02%；601166：14.39%", "undecided"),  # numbers swapped between companies
        (
            "601398、002142、601166、002839 的资本充足率分别为18.02%、15.44%、14.39%、14.30%",
            False,
        ),  # a fourth company
        ("抱歉，无法根据现有资料回答。", False),
        ("", False),
    ],
)
def test_top3_with_values(answer, expected):
    check(ZH_TOP3, ZH_TOP3_GOLD, answer, ZH_SYMBOLS, expected)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("极差约为1726.90亿元", True),  # 亿元 vs 元
        ("极差为17268996.88万元", True),  # 万元 vs 元
        ("极差为172,689,968,830元", True),
        ("The range is 172.69 billion yuan", True),
        ("极差约为1800亿元", False),
        ("极差为17268996.88", "undecided"),  # a bare number that is the gold in 万元: unit unclear
    ],
)
def test_money_units(answer, expected):
    check(RANGE_Q, RANGE_GOLD, answer, [], expected)


@pytest.mark.parametrize(
    "answer, expected",
    [
        (GROWTH_GOLD, True),
        (
            "601077 增长 2%；601328 增长 1.8%；601229 增长 -14%",
            True,
        ),  # the gold's "0.02%" is a fraction printed with %
        ("601077 增长 0.02；601328 增长 0.02；601229 增长 -0.14", True),
        ("601077 增长 2%；601328 增长 1.8%；601229 增长 -30%", False),
        # 601077's value is wrong, but its gold value (2%) is stated for another company: left to the judge
        ("601077 增长 5%；601328 增长 1.8%；601229 增长 -14%", "undecided"),
        (
            "601077 增长 2%；601328 增长 1.8%；601229 增长 14%",
            "undecided",
        ),  # sign only: "fell by 14%" reads the same
    ],
)
def test_a_share_growth_quirk(answer, expected):
    check(GROWTH_Q, GROWTH_GOLD, answer, GROWTH_SYMBOLS, expected)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("The top three are ARAY, SAIC and AMCR.", True),
        ("[ARAY], [SAIC], [AMCR]", True),
        ("SAIC, ARAY, AMCR", False),  # wrong order
        ("The top three are ARAY, SAIC, AMCR and BBY.", False),  # four listed where the question asks three
        (
            "ARAY leads, then BBY, SAIC and AMCR.",
            "undecided",
        ),  # is BBY ranked or a remark? the judge reads it
        (
            "BBY 0.61, ARAY 0.86, SAIC 0.73, AMCR 0.72. Top three: ARAY, SAIC, AMCR",
            True,
        ),  # table, then the list
        ("BBY 0.61, ARAY 0.86, SAIC 0.73, AMCR 0.72. Top three: SAIC, ARAY, AMCR", False),
        ("The top three are ARAY, SAIC and AMCR. BBY came fourth.", True),  # the exact list, then a remark
        ("ARAY and SAIC", False),
        # names without tickers where tickers are asked for: wrong by the matcher, never sent to a judge
        ("Array Inc., Science Applications and Amcor", False),
    ],
)
def test_us_ranking(answer, expected):
    check(US_Q, US_GOLD, answer, US_SYMBOLS, expected)


@pytest.mark.parametrize(
    "answer, expected",
    [
        (TIE_GOLD, True),
        ("601128、002807（各11人）；002936、002839、601577（各8人）", True),  # order within ties is free
        ("002807、601128（各11人）；002839、002936（各8人）", False),  # a tied company missing
        ("002807、601128、002839、002936、601577、600000", False),  # an extra company in the list
    ],
)
def test_ties(answer, expected):
    check(TIE_Q, TIE_GOLD, answer, TIE_SYMBOLS, expected)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("股权登记日最早的是601528，日期为2022年5月9日", True),
        ("601528（2022-05-09）", True),
        ("601528，登记日为05-09", True),  # month-day only
        ("601528，登记日为2022-05-19", "undecided"),  # the date is an aside to a code question
        ("600919，登记日为2022-05-09", False),
    ],
)
def test_dates(answer, expected):
    question = "针对中国A股市场，请根据你知识库中2021年的数据，股权登记日最早的公司证券代码是什么？"
    gold = "根据2021年股权登记日数据，股权登记日最早的公司证券代码分别为：601528，对应日期为：2022-05-09"
    check(question, gold, answer, ["601528", "600919"], expected)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("共有0家。", True),
        ("没有任何公司的办公地址在深圳。", "undecided"),
        ("共有2家", False),
        ("共有十家", False),
    ],
)
def test_zero_count(answer, expected):
    check(
        "针对中国A股市场，在你的知识库中2021年有多少家办公地址在深圳的公司？",
        "办公地址在深圳的公司共有0家。",
        answer,
        [],
        expected,
    )


def test_chinese_numeral_count():
    check(
        "在你的知识库中2022年有多少家公司的ESG报告参照了GRI？",
        "共有10家公司参照了GRI",
        "共有十家公司",
        [],
        True,
    )


def test_negative_money_and_english_scale():
    question = "Based on US stock market, Report the exact net profit amounts and stock symbols for the three most profitable companies in 2023."
    gold = "Top 3 companies by net profit in 2023: [LZB]: $151,941,000.00 [CMCO]: $48,429,000.00 [OOMA]: -$3,655,000.00"
    symbols = ["LZB", "CMCO", "OOMA"]
    check(question, gold, "LZB $151.9 million; CMCO $48.4 million; OOMA -$3.66 million", symbols, True)
    check(
        question,
        gold,
        "LZB $151.9 million; CMCO $48.4 million; OOMA a loss of $3.66 million",
        symbols,
        "undecided",
    )
    check(question, gold, "LZB $151.9 million; CMCO $84.4 million; OOMA -$3.66 million", symbols, False)


def test_text_questions_need_their_strings():
    question = "针对中国A股市场，在你的ESG报告知识库中2021年审验客户数量最多的第三方审验机构是哪家？"
    gold = (
        "根据2021年第三方审验机构客户数量统计，审验客户数量最多的机构是普华永道中天会计师事务所(特殊普通合伙)"
    )
    check(question, gold, "是普华永道中天会计师事务所（特殊普通合伙）", [], True)  # full-width brackets
    check(question, gold, "普华永道", [], "undecided")  # a short name may be right: the judge decides


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("6月召开股东大会的公司最多，共7家", True),
        ("6月", "undecided"),
        ("June, with 7 companies", True),
        ("5月，共7家", False),
    ],
)
def test_which_month(answer, expected):
    question = "针对中国A股市场，在你的知识库中2021年哪个月份召开股东大会的公司最多？"
    check(
        question, "根据2021年股东大会时间分布，6月召开股东大会的公司最多，共有7家公司", answer, [], expected
    )


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("2021-2022年没有公司更换会计事务所。", True),
        ("601577 更换了会计事务所", False),
        ("数据不足，无法判断", "undecided"),
    ],
)
def test_empty_gold_list(answer, expected):
    question = "针对中国A股市场，请你给出你知识库中2021-2022年更换了会计事务所的公司股票代码"
    check(
        question,
        "根据2021年到2022年数据分析，没有公司更换会计事务所。",
        answer,
        ["601577", "600000"],
        expected,
    )


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("601187 提前13天；601577 提前12天", True),
        (
            "相较于2021年提前超过7天的公司证券代码为：601187, 601577",
            False,
        ),  # the asked day counts are missing
        ("601187 提前14天；601577 提前12天", False),
    ],
)
def test_days_earlier_are_numbers_not_ordinals(answer, expected):
    question = "针对中国A股市场，在你的知识库中，2022年股权登记日相较于2021年提前超过7天的公司的股票代码及其提前天数是？"
    gold = "相较于2021年提前超过7天的公司详情如下：证券代码601187：提前13天；证券代码601577：提前12天"
    check(question, gold, answer, ["601187", "601577", "600000"], expected)


def test_question_numbers_of_another_kind_are_still_findings():
    # "记为1分" in the question must not hide the gold's "得分为1.00"
    question = "请计算ESG综合得分最高的三家公司的详细得分情况。有披露则记为1分反之为0分"
    gold = "证券代码002839的综合得分为1.00；证券代码601229的综合得分为0.88；证券代码601963的综合得分为0.85"
    symbols = ["002839", "601229", "601963"]
    check(question, gold, "002839（1.00）、601229（0.88）、601963（0.85）", symbols, True)
    check(question, gold, "002839（0.95）、601229（0.88）、601963（0.85）", symbols, False)


def test_count_question_answered_by_a_list_is_left_to_the_judge():
    question = "在你的知识库中2021年有多少家公司的ESG报告披露了环境信息？"
    check(
        question,
        "共有3家公司披露了环境信息",
        "披露的公司为：600000、600015、600016",
        ["600000", "600015", "600016"],
        "undecided",
    )
    check(question, "共有3家公司披露了环境信息", "披露的公司为：600000、600015", ["600000", "600015"], False)


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("601577：向虹、李孟、杜红艳；002807：宋萍、卞丹娟、龚秀芬", True),  # names in any order
        (
            "601577：向虹、李孟；002807：宋萍、卞丹娟、龚秀芬",
            "undecided",
        ),  # a name missing: maybe spelled otherwise
        ("002807：宋萍、卞丹娟、龚秀芬", False),  # a company missing
    ],
)
def test_names_asked_for_are_checked_as_text(answer, expected):
    question = (
        "针对中国A股市场，2021年你的知识库中女性高管最多的两家公司的股票代码和这些公司的所有女性高管名字是？"
    )
    gold = (
        "股票代码601577，女性高管有：李孟, 杜红艳, 向虹；股票代码002807，女性高管有：宋萍, 卞丹娟, 龚秀芬。"
    )
    check(question, gold, answer, ["601577", "002807", "600000"], expected)
