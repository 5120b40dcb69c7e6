"""Word lists and sentence templates for the synthetic history (data only, no logic).

Every recurring list has twelve entries on purpose: the same people, symptoms, checks, jobs and projects
come back again and again, so a query can only find its conversation by the *combination* (machine +
symptom, line + check, site + job, site + project), never by one rare word.

Each symptom/check/job/project is a triple: the phrase used when the fact is stated, a paraphrase used in
the long question (so the question does not copy the fact's wording), and a short keyword for the
identifier-led query.
"""

# Machine types: id prefix -> noun. Ids look like "P-003"; prefixes are disjoint from site and line
# prefixes so no machine id can be read as a site id.
MACHINE_TYPES = {
    "P": "pump", "K": "compressor", "C": "conveyor", "F": "extraction fan",
    "M": "mixer", "T": "transformer", "G": "generator", "B": "boiler",
}
SITE_PREFIXES = ("N", "S", "E", "W", "R", "H")
SITE_NOUNS = ("site", "site", "substation", "plant")

# (fact phrase, question paraphrase, keyword, machine prefixes it can happen to)
SYMPTOMS = (
    ("seal leak", "leaking seal", "seal leak", "PMKB"),
    ("vibration alarm that keeps firing", "repeated vibration alarms", "vibration alarm", "PKFMGC"),
    ("bearing running hot", "overheating bearing", "hot bearing", "PKFCMG"),
    ("oil leak", "leaking oil", "oil leak", "KTGB"),
    ("overcurrent trips", "overcurrent tripping", "overcurrent trip", "PKCFM"),
    ("pressure drop", "loss of pressure", "pressure drop", "PKB"),
    ("grinding noise", "grinding sound", "grinding noise", "PKCFMG"),
    ("failure to restart after a stop", "restart problems after a stop", "restart failure", "KCGBM"),
    ("drifting temperature sensor", "drifting temperature readings", "temp sensor drift", "TBKGF"),
    ("belt slipping", "slipping belt", "belt slip", "CF"),
    ("coupling misalignment", "misaligned coupling", "coupling misalignment", "PKFGM"),
    ("insulation fault alarm", "insulation alarms", "insulation fault", "TG"),
)

# (fact phrase, question paraphrase, keyword): the quality checks a line's reject rate is measured at.
CHECKS = (
    ("final QC check", "final inspection", "final QC"),
    ("incoming inspection", "goods-in checks", "incoming inspection"),
    ("leak test", "pressure testing", "leak test"),
    ("dimensional check", "dimensional inspection", "dimensional"),
    ("visual inspection", "visual checks", "visual"),
    ("torque audit", "torque checks", "torque audit"),
    ("weld inspection", "weld checks", "weld"),
    ("paint adhesion test", "coating adhesion testing", "adhesion"),
    ("end-of-line functional test", "end-of-line testing", "EOL test"),
    ("first-article inspection", "first-off inspection", "first article"),
    ("X-ray inspection", "radiography check", "X-ray"),
    ("seal integrity check", "seal integrity testing", "seal integrity"),
)

# (fact phrase, question paraphrase, keyword): scheduled jobs that have an owner per site.
JOBS = (
    ("nightly settlement export", "overnight settlement export", "settlement export"),
    ("meter-reading import", "import of meter readings", "meter-reading import"),
    ("shift handover report", "handover report that goes out each shift", "handover report"),
    ("SCADA historian backup", "backup of the historian", "historian backup"),
    ("spare-parts reorder sync", "spares reorder sync", "spare-parts sync"),
    ("weekly maintenance schedule rebuild", "maintenance schedule rebuild", "maintenance schedule"),
    ("energy usage rollup", "energy consumption rollup", "energy rollup"),
    ("QC results upload", "upload of QC results", "QC upload"),
    ("invoice reconciliation run", "invoice reconciliation", "invoice reconciliation"),
    ("work-order sync to the CMMS", "CMMS work-order sync", "work-order sync"),
    ("sensor calibration report", "calibration report for the sensors", "calibration report"),
    ("timesheet export to payroll", "payroll timesheet export", "timesheet export"),
)

# (fact phrase, question paraphrase, keyword): projects that end in a decision record per site.
PROJECTS = (
    ("switchgear upgrade", "switchgear replacement", "switchgear"),
    ("roof repair", "roof works", "roof repair"),
    ("SCADA migration", "move to the new SCADA", "SCADA migration"),
    ("cooling tower retrofit", "cooling tower rework", "cooling tower"),
    ("control room refit", "control room refurbishment", "control room"),
    ("fire suppression upgrade", "fire suppression work", "fire suppression"),
    ("backup generator replacement", "standby generator swap", "backup generator"),
    ("LED lighting retrofit", "lighting changeover to LED", "lighting retrofit"),
    ("compressed air ring main", "compressed-air pipework", "air ring main"),
    ("perimeter fence replacement", "new perimeter fencing", "fence"),
    ("dosing system upgrade", "chemical dosing upgrade", "dosing"),
    ("forklift fleet renewal", "forklift replacement", "forklifts"),
)

# The twelve colleagues who recur everywhere, by first name only. Job owners are other people with full
# names (some share these first names), so an owner's full name appears in exactly one conversation.
COLLEAGUES = ("Priya", "Marco", "Aisha", "Tomás", "Grace", "Dmitri",
              "Kenji", "Fatima", "Liam", "Ngozi", "Sven", "Rosa")
OWNER_FIRST = COLLEAGUES + (
    "Anna", "Ben", "Chloe", "Daniel", "Elena", "Farid", "Hannah", "Ivan", "Julia", "Karim", "Lena",
    "Mateo", "Nadia", "Oscar", "Paula", "Rahul", "Sara", "Tariq", "Uma", "Victor", "Wen", "Yusuf",
    "Zara", "Alan", "Bea", "Carlos", "Dana", "Emeka", "Freya", "Gustav", "Ines", "Jonas", "Keiko",
    "Luis", "Mira", "Nils", "Olga", "Pedro")
OWNER_LAST = (
    "Raman", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Kowalski", "Haddad", "Brennan", "Schulz",
    "Costa", "Nakamura", "Adeyemi", "Fischer", "Rossi", "Petrov", "Walsh", "Jensen", "Mendes", "Kaur",
    "Novak", "Dubois", "Yilmaz", "Hughes", "Sato", "Ferreira", "Kim", "Andersen", "Bianchi", "Horvat",
    "Mwangi", "Lopez", "Nowak", "Farouk", "Olsen", "Reyes", "Chowdhury", "Baker", "Ito", "Varga",
    "Lund", "Mahlaba", "Quinn", "Sandoval", "Takahashi", "Usman", "Vogel", "Whitaker", "Zhou",
    "Abbott", "Bakker", "Castillo", "Dimitrov", "Eriksen", "Gallo", "Hale", "Iqbal", "Jovanovic",
    "Keller", "Marsh", "Pellegrini")

FOODS = ("lentil curry", "fish and chips", "a sad sandwich", "ramen from the van outside", "leftover lasagne",
         "the chicken wrap", "soup and a roll", "a burrito the size of my arm", "the salad bar")
HOBBIES = ("fixing the fence", "a long bike ride", "painting the spare room", "the kids' football match",
           "a hike up the hill", "sorting the garage", "baking bread", "a parkrun", "the allotment")
EVENTS = ("a bowling night", "a quiz night", "a five-a-side match", "a curry night", "an escape room",
          "a summer barbecue", "a charity bake sale", "a go-karting afternoon")
AREAS = ("loading bay", "north wall", "old workshop", "tank farm", "boiler house", "dispatch area")

# Small talk, by topic. Slots: {c1} {c2} colleagues, {food}, {hobby}, {event}, {mins}.
WEATHER = {
    "winter": ("Frost on the car again, took ten minutes to scrape the windscreen.",
               "It's properly dark at 5pm now and I'm not coping. Also the heating in the office is broken.",
               "Snow forecast for tonight, so half the team is already talking about working from home."),
    "spring": ("Finally some sun this morning, walked in without a coat for the first time this year.",
               "Showers on and off all day, I've been soaked twice going between buildings.",
               "The blossom outside the gatehouse is out, which means hay fever season for me."),
    "summer": ("It's already 28 degrees and the control room air con is wheezing.",
               "Lovely evening yesterday, sat outside until ten. Today I'm paying for it with no sleep.",
               "Thunderstorms forecast this afternoon, so fingers crossed for no power blips."),
    "autumn": ("Leaves everywhere in the car park and it's raining sideways. Classic October.",
               "Clocks go back soon, thank goodness, I could use the extra hour.",
               "Foggy drive in this morning, could barely see the junction."),
}
SMALLTALK = {
    "lunch": ("Just back from lunch, the canteen had {food} again. Not complaining.",
              "Had {food} with {c1} at lunch, we spent the whole time talking about the new rota.",
              "Skipped lunch again, running on coffee and {food} from the machine."),
    "weekend_past": ("Good weekend? Mine was mostly {hobby}, and Sunday was a washout.",
                     "Still recovering from the weekend, {hobby} took way longer than planned.",
                     "Weekend went by too fast. {c1} came round for dinner, we did {hobby} on Saturday."),
    "weekend_next": ("Nearly the weekend. Planning on {hobby} if the weather holds.",
                     "{c1} keeps asking what I'm doing this weekend. Honestly, {hobby} and a nap.",
                     "Long weekend coming up, I've promised myself {hobby} and no emails."),
    "commute": ("Commute was painful today, roadworks on the ring road again. Took me {mins} minutes.",
                "Train was cancelled so I got a lift with {c1}, who drives like it's a rally stage.",
                "Cycled in today for the first time in ages, my legs are already complaining."),
    "team": ("{c1} is organising {event} for the team next Thursday, I said I'd bring snacks.",
             "It's {c2}'s birthday so there's cake in the break room. I've had two slices, no regrets.",
             "We had the quarterly team lunch today, {c1} gave a speech that went on a bit."),
}
SMALLTALK_REPLY = {
    "weather": ("Sounds rough. Hope it clears up before the drive home.",
                "Weather's really doing its thing. At least it gives everyone something to talk about.",
                "Stay warm, or cool, whichever applies. What's on the list today?"),
    "lunch": ("Honestly that sounds like a decent lunch. What's on the agenda this afternoon?",
              "Canteen loyalty is admirable. Anything you want to get through today?",
              "Coffee counts as a food group on busy days. What are we working on?"),
    "weekend_past": ("Sounds like a proper weekend. Ready for the week?",
                     "That's a good use of a Saturday. What's first on the list today?",
                     "Nice. Washouts happen. Anything urgent this morning?"),
    "weekend_next": ("That sounds like a good plan. What do you need to get done before then?",
                     "A nap is an underrated weekend plan. Anything on your plate today?",
                     "Guard that no-email rule. What's left for this week?"),
    "commute": ("Commutes like that eat the day. Hope the way home is easier.",
                "Sounds like an adventure. Glad you made it in one piece.",
                "Glad you made it in. Anything urgent this morning?"),
    "team": ("That sounds fun. Any snacks in mind?",
             "Cake in the break room is the best kind of news. What's happening at work?",
             "Speeches do tend to run long. Anything I can help with today?"),
}
GREETINGS = {"am": ("Morning! ", "Hi again. ", "Hey. ", ""), "pm": ("Afternoon! ", "Hi again. ", "Hey. ", "")}

# Ops chatter, none of which states a fact that a question asks about. Slots: {ma} "pump P-003",
# {ma_id}, {mb}, {a_sym} "a seal leak", {site}, {job}, {proj}, {line}, {check}, {bld}, {mt}, {dr}, {c1}, {c2}, {area}.
CHATTER_SYMPTOM = ("Bit of a morning. {ma} threw {a_sym} warning around 6 but it cleared by itself. "
                   "{c1} says to keep an eye on it.",
                   "Heads up, {ma} had {a_sym} on the night shift. Not raising anything yet, {c1} thinks it's "
                   "the sensor.",
                   "{c1} mentioned {ma} might have {a_sym} starting, so we're checking it on the next round.")
CHATTER_STATUS = ("{ma} is back online after the overhaul, finally. {c1} wants it on the early shift tomorrow.",
                  "{ma} is due its 2,000-hour service next week and I need a slot that doesn't clash with "
                  "deliveries.",
                  "We moved {ma} onto the standby motor while the spare gets rewound.",
                  "{c1} has {ma} stripped down in the {area} for the annual inspection.")
CHATTER_SITE = ("{site} had a short power blip at 5am, everything came back on its own.",
                "The {job} job for {site} failed again overnight; the rerun {bld} went green though.",
                "The {proj} at {site} is slipping, the contractor says two more weeks.",
                "{c2} is covering {site} on Friday because their supervisor is on leave.")
CHATTER_LINE = ("{line} is down for a changeover until lunchtime.",
                "{line} is doing extra {check} samples this week after a customer complaint.")
CHATTER_MACHINE_B = ("Walked past {mb} on the way in and it sounded fine for once.",
                     "{c2} spent the morning at {mb} doing the lube round.",
                     "Also the contractors parked right in front of {mb} again, so that was fun.",
                     "{c2} wants photos of {mb} for the asset register, no idea why today.")
CHATTER_DISTRACTOR = ("Also {mt} finally got closed, only took three weeks.",
                      "And {dr} still needs a signature from finance, which is a whole saga.")
CHATTER_REPLY = ("Busy start. If {ma_id} keeps acting up, worth logging the times so you can spot a pattern.",
                 "Noted on {ma_id}. Want me to draft a quick note to {c1} so it doesn't get lost?",
                 "Sounds like a lot at once. Anything you need from me on the {site} side?",
                 "Makes sense. Let me know if you want a summary of the open items for the week.")

# The fact itself, said in passing. Lead-ins and tails make it sit inside the chatter.
FACT_LEADS = ("Oh, before I forget, ", "For the record: ", "Just so it's written down somewhere, ",
              "Quick update: ", "Note to self, really: ", "")
FACT_TAILS = ("{c1} raised it from the night shift.", "I'll chase it after lunch.", "Anyway, back to the coffee.",
              "{c2} asked me to keep track of it.", "", "")
FACTS = {
    "ticket": ("ticket {mt} is open for the {sym} on {mnoun} {mid}.",
               "I logged {mt} for the {sym} on {mnoun} {mid}.",
               "{mt} covers the {sym} on {mid}, the {mnoun} by the {area}.",
               "the {sym} on {mnoun} {mid} is under ticket {mt} now."),
    "rate": ("line {line} rejected {rate} at the {check}.",
             "the {check} on {line} came back at {rate} rejects this week.",
             "{line} is running {rate} rejects at the {check}, which {c1} blames on the new tooling.",
             "the {check} numbers for line {line} are in: {rate} rejected."),
    "owner": ("the {job} job for {site} is owned by {name}.",
              "{name} owns the {job} job at {site} now.",
              "{site}'s {job} job belongs to {name} since the reorg.",
              "if the {job} job for {site} breaks, it's {name}'s, they took it over in the spring."),
    "decision": ("we went with option {opt} for the {site} {proj}, decision {dr}.",
                 "{dr} is the decision record for the {proj} at {site}: we picked option {opt}.",
                 "the {proj} at {site} is settled, option {opt}, logged as {dr}."),
}
FACT_ACKS = {
    "ticket": ("Got it: {mt} for the {symkw} on {mid}. Want a reminder to check on it Friday?",
               "Noted. I'll keep that with the {mid} notes.", "Thanks, that's a useful one to have written down."),
    "rate": ("Noted, {rate} at the {check} for {line}. Is that up on last month?",
             "Thanks. That's worth watching if it creeps up.",
             "Got it for {line}. Shout if you want it tracked week by week."),
    "owner": ("Good to know who to ask. I'll remember {name} for that one.",
              "Noted, that's one less mystery job.", "Got it. Handy when it fails at 3am."),
    "decision": ("Great, {dr} it is. Option {opt} seemed the sensible one.",
                 "Good that it's finally decided.", "Noted, I'll refer back to that when it comes up."),
}

# Questions. Long: a paraphrase; short: identifier-led keywords.
LONG_Q = {
    "ticket": ("Which work order was raised for the {symq} on {mnoun} {mid}?",
               "What's the ticket number for the {symq} we had on {mid}?",
               "Do you remember the job number for the {mnoun} {mid} and its {symq}?"),
    "rate": ("What reject rate did line {line} have at {checkq}?",
             "How many parts were failing {checkq} on {line}, as a percentage?",
             "What share of {line}'s output got rejected at {checkq}?"),
    "owner": ("Who is responsible for the {jobq} at {site}?",
              "Who should I ping when the {jobq} for {site} breaks?",
              "Which person looks after {site}'s {jobq}?"),
    "decision": ("Which decision record covers the option we picked for the {projq} at {site}?",
                 "What was the decision reference for {site}'s {projq}?",
                 "Where did we write down what we chose for the {projq} at {site}?"),
}
SHORT_Q = {
    "ticket": "{mid} {symkw} ticket",
    "rate": "{line} {checkkw} reject rate",
    "owner": "{site} {jobkw} job owner",
    "decision": "{site} {projkw} decision",
}
# Unanswerable questions by a missing reference number rather than a missing machine/site.
LONG_Q_BY_REF = {
    "ticket": ("What was ticket {mt} raised for?", "Which machine is work order {mt} about?"),
    "decision": ("What did decision {dr} settle?", "Which option did we pick in {dr}?"),
}
SHORT_Q_BY_REF = {"ticket": "{mt} ticket", "decision": "{dr} decision"}
