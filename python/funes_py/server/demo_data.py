"""The demo's conversations: two weeks of an operations lead (alice) and one of another site (bob).

Written to be specific (sites, tickets, people, figures) so a recall either finds the right passage or
visibly does not. The tests reuse them. Alice's text never mentions motor P-7 or ticket MT-5120; those
belong to bob, which is what the negative control checks.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

Turn = tuple[str, str]  # (role, text)


def _turns(start: str, turns: list[Turn], minutes_apart: int = 3) -> list[dict[str, Any]]:
    t0 = dt.datetime.fromisoformat(start.replace("Z", "+00:00"))
    return [
        {"role": role, "text": text, "ts": (t0 + dt.timedelta(minutes=i * minutes_apart)).isoformat().replace("+00:00", "Z")}
        for i, (role, text) in enumerate(turns)
    ]


ALICE: dict[str, list[dict[str, Any]]] = {
    "site-review-rtm-gdn": _turns("2026-09-28T08:05:00Z", [
        ("user", "Can you help me prepare the monthly performance review for Rotterdam and Gdansk? "
                 "Rotterdam OEE was 81.4% in September, Gdansk 73.9%. Throughput 9,800 vs 7,350 pallets a week."),
        ("assistant", "Sure. The gap is 7.5 OEE points. Split it into availability, performance and quality: "
                      "do you have unplanned downtime per line for Gdansk?"),
        ("user", "Gdansk line 3 lost 212 minutes a week to changeovers, line 1 about 40. Quality is the same "
                 "at both sites, 98.6% first pass yield."),
        ("assistant", "Then availability explains most of it: 212 minutes of changeover on line 3 is roughly "
                      "5 OEE points on that line alone. Rotterdam runs SMED changeovers in 18 minutes; Gdansk "
                      "line 3 averages 53 minutes per changeover across four a week."),
        ("user", "OK. Action for the review: a SMED workshop on Gdansk line 3 in week 42, owner Tomasz Nowak, "
                 "target changeover under 25 minutes."),
        ("assistant", "Noted for the review: SMED workshop, Gdansk line 3, week 42, owner Tomasz Nowak, target "
                      "under 25 minutes per changeover, which would recover about 110 minutes a week."),
    ]),
    "forecast-q4-scenarios": _turns("2026-09-30T13:20:00Z", [
        ("user", "I need the Q4 volume forecast for both sites. Let's build three scenarios."),
        ("assistant", "Proposal: Scenario A conservative with 1.5% monthly growth, Scenario B with 3.2% monthly "
                      "growth, Scenario C aggressive with 5.0%. All three apply a December seasonality factor of "
                      "1.18 and churn of 0.8% per month."),
        ("user", "Use a 14-day replenishment lead time and start from the September actual of 17,150 pallets a week."),
        ("assistant", "With those inputs December lands at 20,960 pallets a week in Scenario A, 22,870 in "
                      "Scenario B and 24,950 in Scenario C."),
        ("user", "We take Scenario B as the base case: 3.2% monthly growth, seasonality 1.18 for December, churn "
                 "0.8% a month, lead time 14 days. A is the downside case for the budget meeting."),
        ("assistant", "Base case recorded: Scenario B (3.2% monthly growth, December seasonality 1.18, churn "
                      "0.8%/month, 14-day lead time, from 17,150 pallets/week). Scenario A is the downside case."),
    ]),
    "nightly-batch-recon": _turns("2026-10-01T07:40:00Z", [
        ("user", "The nightly reconciliation batch recon_nightly (job JOB-2207) failed again last night. "
                 "That's three nights in a row: 29 September, 30 September and 1 October."),
        ("assistant", "The error log shows the load step rejecting rows with a null settlement_amount. All "
                      "rejected rows come from the SettleNet bank feed and are dated 30 September."),
        ("user", "Why would the settlement column be empty only at the end of September?"),
        ("assistant", "SettleNet switched its export to file format v2.3 at the month-end close on 30 September. "
                      "In v2.3 the settlement column is renamed settled_amt, so our mapping reads nothing and "
                      "the settlement_amount column arrives empty for every month-end row."),
        ("user", "Escalate it to Marta Kowalczyk in Treasury, she owns the SettleNet feed. Open a data feed ticket."),
        ("assistant", "Escalated to Marta Kowalczyk (Treasury, owner of the SettleNet feed) with ticket DF-2291: "
                      "map settled_amt to settlement_amount for format v2.3 and re-run JOB-2207 for 29 September "
                      "to 1 October."),
    ]),
    "shift-handover-gdn": _turns("2026-10-03T21:55:00Z", [
        ("user", "Shift handover for Gdansk night shift, can you structure it?"),
        ("assistant", "Send me the open items and I'll turn them into the usual handover format."),
        ("user", "Line 2 conveyor gearbox is vibrating, maintenance ticket MT-3318 is open to replace it. The N-11 "
                 "palletizer controller upgrade was planned for tonight."),
        ("assistant", "The N-11 upgrade needs a full functional test of line 2 after flashing the firmware, and the "
                      "line cannot run a test while MT-3318 is open. So MT-3318 blocks the N-11 upgrade."),
        ("user", "Agreed. Decision: we postpone the N-11 upgrade until MT-3318 is closed. New target window is the "
                 "night shift of 14 October. Piotr from maintenance confirms the gearbox arrives on the 11th."),
        ("assistant", "Handover: (1) MT-3318 line 2 gearbox replacement open, part arrives 11 October (Piotr). "
                      "(2) N-11 palletizer controller upgrade postponed until MT-3318 is closed; new window "
                      "night shift 14 October. (3) No other open safety items."),
    ]),
    "unit-rate-rtm": _turns("2026-10-06T10:10:00Z", [
        ("user", "Let's calculate the unit rate per pallet for Rotterdam for last week."),
        ("assistant", "I need labour, energy and other direct costs, plus pallets shipped."),
        ("user", "Labour 18,450 EUR, energy 6,210 EUR, packaging 3,940 EUR, and we shipped 9,800 pallets."),
        ("assistant", "Total direct cost is 28,600 EUR, so the unit rate is 2.92 EUR per pallet: labour 1.88, "
                      "energy 0.63, packaging 0.40."),
        ("user", "Good, use 2.92 EUR per pallet as the Rotterdam unit rate in the customer quotes this quarter."),
    ]),
    "capacity-nordhaven": _turns("2026-10-09T15:30:00Z", [
        ("user", "Nordhaven wants 42,000 extra units over 6 weeks starting week 43. Do we have capacity?"),
        ("assistant", "That is 7,000 units a week. Rotterdam is at 96% utilisation, so no. Gdansk has 4,100 "
                      "units of weekly headroom on weekdays, and Saturday shifts add 3,300."),
        ("user", "So Gdansk can do it only with Saturdays?"),
        ("assistant", "Yes: 4,100 weekday headroom plus 3,300 from Saturday shifts is 7,400 units a week, above "
                      "the 7,000 needed, with about 5% slack."),
        ("user", "Decision: we accept the Nordhaven order, produced in Gdansk with Saturday shifts in weeks 43 to "
                 "45 and again in week 48. Rotterdam stays out of it."),
        ("assistant", "Recorded: Nordhaven order accepted, 42,000 units over 6 weeks from week 43, all in Gdansk, "
                      "Saturday shifts weeks 43-45 and 48; Rotterdam not used."),
    ]),
}

BOB: dict[str, list[dict[str, Any]]] = {
    "leipzig-pump-station": _turns("2026-10-05T06:45:00Z", [
        ("user", "Leipzig pump station: motor P-7 tripped twice overnight on over-temperature."),
        ("assistant", "Check vibration and bearing temperature. Over-temperature trips with rising vibration "
                      "usually point at the drive-end bearing."),
        ("user", "Vibration is 7.1 mm/s, bearing at 92 C. I opened maintenance ticket MT-5120 for a bearing swap."),
        ("assistant", "7.1 mm/s is in zone C under ISO 10816. Run P-7 on the standby pump until MT-5120 is done."),
    ]),
}

# The demo's questions and what a correct answer must contain (the tests check these strings).
ALICE_QUESTIONS: list[tuple[str, list[str]]] = [
    ("what did we decide about the N-11 upgrade and what blocks it?", ["MT-3318", "N-11"]),
    ("why was the settlement column empty at the end of September and who was it escalated to?",
     ["Marta Kowalczyk"]),
    ("what forecast scenario did we choose as base case, with which parameters?", ["Scenario B", "3.2%"]),
]
NEGATIVE_QUESTION = "did we ever talk about motor P-7 or ticket MT-5120?"
BOB_ONLY_MARKERS = ["P-7", "MT-5120", "Leipzig"]
# Strings that appear only in alice's conversations; none may ever reach bob.
ALICE_ONLY_MARKERS = [
    "MT-3318", "N-11", "Marta Kowalczyk", "DF-2291", "JOB-2207", "SettleNet", "Scenario B", "Nordhaven",
    "Tomasz Nowak", "2.92 EUR", "Gdansk", "Rotterdam", "settlement_amount", "17,150",
]


def bodies(user: str, conversations: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """POST /turns bodies, one per conversation."""
    return [{"user": user, "conversation_id": cid, "turns": turns} for cid, turns in conversations.items()]
