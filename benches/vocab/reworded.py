"""Reworded questions and out-of-domain negatives for the operations history (`benches.history`): data only.

The stored facts say "seal leak", "final QC check", "nightly settlement export", "switchgear upgrade"; the
close questions of `vocab.en.LONG_Q` paraphrase them with the same stems ("leaking seal"). A user rarely reuses
the stored words, so these questions say the same thing with synonyms and other sentence shapes: "a weeping
gasket", "the quality gate right before dispatch", "the after-midnight payments clearing extract", "new
electrical distribution panels". They were written from the meaning of each topic, not from its words, and
`benches.reworded.check_reworded` proves on the text that no content word of the fact's own turns (the user's
statement and the assistant's echo) comes back, except identifiers and the few words in `NO_SYNONYM`.

Each topic has two reworded phrases, in the same order as its table in `vocab.en` (SYMPTOMS, CHECKS, JOBS,
PROJECTS). Symptom phrases read after "had" ("P-003 had a weeping gasket"); check phrases are noun phrases
with their article; job and project phrases have no article (templates add "the" or a possessive).
"""

# Words with no common synonym that a reworded question may share with the stored fact (a "bearing" is a
# bearing). Compared after `reworded.stem`.
NO_SYNONYM = ("bearing",)

SYMPTOMS_R = (
    ("a weeping gasket", "fluid dripping past its gasket"),
    ("shaking warnings going off over and over", "repeated shudder alerts"),
    ("an overheating bearing", "a bearing getting far too warm"),
    ("lubricant seeping out", "lube dripping onto the floor"),
    ("its protection cutting out on excess amps", "breakers flipping because it draws too many amps"),
    ("falling PSI", "output head sagging"),
    ("a harsh scraping racket", "a rasping din from inside"),
    ("trouble coming back on after being switched off", "no way to power it up again once halted"),
    ("a thermal probe giving wandering readings", "a heat probe whose values creep about"),
    ("its drive band losing grip", "a band sliding on its pulley"),
    ("shafts out of true at the joint", "a crooked shaft connection"),
    ("warnings that the winding isolation is failing", "earth-leakage warnings on its windings"),
)

CHECKS_R = (
    ("the quality gate right before dispatch", "the quality sign-off right before shipping"),
    ("the screening of supplier deliveries on arrival", "goods-received vetting"),
    ("the airtightness trial", "the tightness trial under pressure"),
    ("the gauging of part sizes against the drawing", "measuring parts against their tolerances"),
    ("the by-eye look for cosmetic flaws", "the surface blemish look-over"),
    ("the bolt-tightness verification", "the fastener tightness sampling"),
    ("the examination of fused seams", "the joining-seam examination"),
    ("the coating bond trial", "the trial of how well the coating sticks"),
    ("the working trial once assembly is finished", "the does-it-work trial after assembly"),
    ("the sign-off of the initial piece off a fresh setup", "approval of the initial part produced"),
    ("radiographic screening", "the radiography scans"),
    ("the verification that closures are tight", "gasket tightness verification"),
)

JOBS_R = (
    ("after-midnight payments clearing extract", "overnight clearing file for payments"),
    ("loading of utility counter data", "gauge data ingestion"),
    ("crew changeover summary", "summary passed between crews"),
    ("process-data archive copy", "safety copy of the plant data archive"),
    ("replacement-component restocking feed", "stock replenishment feed for replacement components"),
    ("regeneration of the upkeep calendar", "recurring upkeep plan regeneration"),
    ("power consumption summary", "electricity totals aggregation"),
    ("publishing of inspection outcomes", "inspection outcome publishing"),
    ("matching of supplier bills to payments", "supplier bill matching"),
    ("copying of repair requests into the asset-management system", "asset-management system feed of repair requests"),
    ("instrument accuracy adjustment summary", "summary of instrument adjustments"),
    ("hours-worked feed to the wages system", "wages feed of hours worked"),
)

PROJECTS_R = (
    ("new electrical distribution panels", "replacement of the breaker panels"),
    ("re-covering of the building's top", "fixes to the covering over our heads"),
    ("move to the new plant control software", "changeover of the process control software"),
    ("evaporative heat-rejection unit refit", "rework of the evaporative heat-rejection unit"),
    ("operations centre refurbishment", "makeover of the operators' quarters"),
    ("sprinkler system improvements", "extinguishing system improvements"),
    ("standby power unit swap", "swap of the emergency power unit"),
    ("change to low-energy lamps", "switch to efficient lamps"),
    ("pneumatic distribution loop pipework", "pneumatic loop piping"),
    ("new boundary security barrier", "swap-out of the boundary railings"),
    ("chemical injection equipment improvement", "chemical injection kit improvement"),
    ("new lift trucks", "replacement of the pallet trucks"),
)

# Restructured sentences: statements, requests, fronted subjects, the identifier late or early. None uses a
# fact template's own words (ticket, open, logged, covers, rejected, owned, job, decision, record, option...).
# Slots: {mid} {line} {site} identifiers; {rsym} {rcheck} {rjob} {rproj} the reworded topic.
TEMPLATES_R = {
    "ticket": (
        "When {mid} had {rsym}, what reference number did that get?",
        "Can you find the case number we filed after {mid} had {rsym}?",
        "{mid} had {rsym} at some point. Which report ID went with that?",
        "Remind me of the reference for the problem where {mid} had {rsym}.",
        "What number was the repair request for {mid}, back when it had {rsym}?",
    ),
    "rate": (
        "What fraction of {line}'s parts got binned at {rcheck}?",
        "At {rcheck}, how much of what {line} produced was thrown out, as a percentage?",
        "Give me the scrap percentage for {line} during {rcheck}.",
        "How badly did {line} do at {rcheck}? I mean the failure percentage.",
    ),
    "owner": (
        "Whose responsibility is the {rjob} for {site}?",
        "If the {rjob} for {site} goes wrong, who do I talk to?",
        "Who's in charge of the {rjob} at {site}?",
        "Name the person accountable for {site}'s {rjob}.",
    ),
    "decision": (
        "What's the reference for the choice we made on the {rproj} at {site}?",
        "Which ruling number documents how {site}'s {rproj} was resolved?",
        "For the {rproj} at {site}, what identifier did the agreed approach get?",
        "What number did we give the call on {site}'s {rproj}?",
    ),
}

# Out-of-domain negatives: one operations lead's private life and other trades, never discussed in the
# history. (question, terms the history must never contain). The terms are what makes the question about
# something absent; `check_reworded` proves on the text that none of them appears in any conversation.
OOD = (
    ("When is my next dentist appointment?", ("dentist",)),
    ("What did the dentist say about the filling?", ("dentist", "filling")),
    ("When does the lease on my flat run out?", ("lease",)),
    ("What did the landlord say about renewing the tenancy?", ("landlord", "tenancy")),
    ("Where are we holding the holiday party this year?", ("holiday party",)),
    ("Who is bringing mulled wine to the holiday party?", ("holiday party", "mulled wine")),
    ("What time is my daughter's piano recital?", ("piano", "recital")),
    ("Which vet did we take the cat to?", ("vet",)),
    ("When is the cat due for her vaccinations?", ("vaccination",)),
    ("How much was the mortgage payment last month?", ("mortgage",)),
    ("What interest rate did the bank offer on the remortgage?", ("mortgage", "interest rate")),
    ("When does my passport expire?", ("passport",)),
    ("Did I renew my driving licence?", ("driving licence",)),
    ("What size wedding dress did my sister order?", ("wedding dress",)),
    ("What's the gift list for my cousin's wedding?", ("wedding",)),
    ("Which gym did I sign up to in January?", ("gym",)),
    ("How many laps did I swim at the leisure centre?", ("laps", "leisure centre")),
    ("What was my time in the half marathon?", ("marathon",)),
    ("Which flight are we taking to Lisbon?", ("lisbon", "flight")),
    ("What's the hotel booking reference for our trip to Rome?", ("rome", "hotel")),
    ("Did we ever book the ski chalet for February?", ("ski", "chalet")),
    ("What's the name of the babysitter we used last time?", ("babysitter",)),
    ("Which nursery did we put the toddler down for?", ("nursery", "toddler")),
    ("When is parents' evening at the primary school?", ("parents' evening", "primary school")),
    ("What did the optician say about my prescription?", ("optician", "prescription")),
    ("When is my annual physical with the GP?", ("physical", "gp")),
    ("What dose of antibiotics was I prescribed?", ("antibiotic",)),
    ("Which plumber fixed the kitchen sink at home?", ("sink", "plumber")),
    ("What paint colour did we choose for the living room?", ("living room", "paint colour")),
    ("Where did we order the new sofa from?", ("sofa",)),
    ("What's my broadband provider's customer number?", ("broadband",)),
    ("When does the home insurance policy renew?", ("home insurance",)),
    ("How much council tax do we pay?", ("council tax",)),
    ("What did the accountant say about my tax return?", ("accountant", "tax return")),
    ("Which pension fund did I move my savings into?", ("pension",)),
    ("What was the score in the rugby final?", ("rugby",)),
    ("Who won the pub darts league?", ("darts",)),
    ("What's the recipe for the vegan lasagne I liked?", ("vegan", "recipe")),
    ("Which wine did we order at the Italian restaurant?", ("wine", "italian")),
    ("When is the book club meeting and which novel are we reading?", ("book club", "novel")),
    ("What was the name of the podcast about ancient Rome?", ("podcast",)),
    ("Which guitar teacher did I book lessons with?", ("guitar",)),
    ("When are the bins collected on our street?", ("bins",)),
    ("What did the garage quote for the car's MOT?", ("mot",)),
    ("How much was the parking fine in town?", ("parking fine",)),
    ("When did I last get a haircut?", ("haircut",)),
    ("What did my mother want for her birthday?", ("mother",)),
    ("Which hospice did we donate to at Christmas?", ("hospice",)),
    ("What is the Wi-Fi password at my parents' house?", ("password", "parents")),
    ("Which concert tickets did I buy for October?", ("concert",)),
)
