package dashboard

import (
	"fmt"

	"github.com/denar-mk/denar"
)

// fieldMessage words a field error of the application layer in lang: in
// Macedonian by the format the domain package made it of
// (denar.FieldError.Format; an error without one by its Message), with its
// arguments; in English, and for a format without a Macedonian wording,
// its Message as the API gives it.
// mk are the Macedonian wordings by format (fieldMessagesMK).
func fieldMessage(mk map[string]string, lang string, f denar.FieldError) string {
	if lang != "mk" {
		return f.Message
	}
	format, args := f.Format()
	if format == "" {
		format, args = f.Message, nil
	}
	tr, ok := mk[format]
	if !ok {
		return f.Message
	}
	if len(args) == 0 {
		return tr
	}
	return fmt.Sprintf(tr, args...)
}

// fieldMessagesMK are the Macedonian wordings of the field errors the
// application layer gives the dashboard's forms, by the format the domain
// packages use (English), with the same verbs in the same order. A test
// walks the call sites and fails on a format without a wording here.
func fieldMessagesMK() map[string]string {
	return map[string]string{
		"a unit discount is between 0 and the unit price %s (UJP %s)":                                        "единечниот попуст е помеѓу 0 и единечната цена %s (УЈП %s)",
		"has more than %d decimals, the most UJP's document carries here":                                    "има повеќе од %d децимали, најмногу што документот на УЈП носи тука",
		"is before the issue date %s":                                                                        "е пред датумот на издавање %s",
		"is more than the unit price %s: the price after discount would be negative":                         "е поголем од единечната цена %s: цената по попустот би била негативна",
		"is not a decimal number such as \"1234.50\" (no exponent or plus sign)":                             "не е децимален број како „1234.50“ (без експонент или знак плус)",
		"must not be empty or only white space":                                                              "не смее да биде празно или само празни места",
		"%q is not a correction reason":                                                                      "%q не е причина за корекција",
		"%q is not a country":                                                                                "%q не е држава",
		"%q is not a currency":                                                                               "%q не е валута",
		"%q is not a document type":                                                                          "%q не е вид на документ",
		"%q is not a payment type":                                                                           "%q не е начин на плаќање",
		"%q is not a reference document type you can set":                                                    "%q не е вид на референтен документ што може да се наведе",
		"%q is not a scope of the e-invoicing service":                                                       "%q не е дозвола на сервисот за е-фактури",
		"%q is not a tax indicator":                                                                          "%q не е даночна ознака",
		"tax indicator %s is not used with document type %s (UJP %s)":                                        "даночната ознака %s не се користи со видот на документ %s (УЈП %s)",
		"tax indicator %s is not used with document type %s (UJP lists it for %s)":                           "даночната ознака %s не се користи со видот на документ %s (УЈП ја наведува за %s)",
		"%q is not a void reason":                                                                            "%q не е причина за сторно",
		"%q is not an environment (sandbox or production)":                                                   "%q не е средина (sandbox или production)",
		"%q is not an event type (see GET /v1/event-types)":                                                  "%q не е вид на настан (видете GET /v1/event-types)",
		"%q is not one of UJP's reject reasons":                                                              "%q не е причина за одбивање од листата на УЈП",
		"%s%% is not a VAT rate of any tax group":                                                            "%s%% не е стапка на ДДВ на ниту една даночна група",
		"a Macedonian tax number (ЕДБ) has 13 digits (UJP %s)":                                               "македонскиот даночен број (ЕДБ) има 13 цифри (УЈП %s)",
		"a correction must reference the corrected document (docTypeRef %s, docNumberRef its EUID) (UJP %s)": "корекцијата мора да го наведе коригираниот документ (docTypeRef %s, docNumberRef неговиот ЕУИД) (УЈП %s)",
		"a correction needs a correction reason (UJP %s)":                                                    "корекцијата бара причина за корекција (УЈП %s)",
		"a positive exchange rate to MKD is required for %s (UJP %s)":                                        "за %s е задолжителен позитивен курс кон МКД (УЈП %s)",
		"a reason is given but docStorno is 0 (UJP %s)":                                                      "дадена е причина, а docStorno е 0 (УЈП %s)",
		"a storno must reference the voided document (docTypeRef %s, docNumberRef its EUID) (UJP %s)":        "сторното мора да го наведе сторнираниот документ (docTypeRef %s, docNumberRef неговиот ЕУИД) (УЈП %s)",
		"a storno needs a void reason (UJP %s)":                                                              "сторното бара причина за сторно (УЈП %s)",
		"a storno's quantities are negative (UJP %s)":                                                        "количините на сторно се негативни (УЈП %s)",
		"at least one line is required (UJP %s)":                                                             "задолжителна е барем една ставка (УЈП %s)",
		"a batch names at least one request":                                                                 "пакетот наведува барем едно барање",
		"names %s again (as item %d); a batch answers each request once":                                     "го наведува %s повторно (како ставка %d); пакетот одговара на секое барање еднаш",
		"at most 100 companies":                                                                              "најмногу 100 компании",
		"at most 50 event types":                                                                             "најмногу 50 видови настани",
		"at most 500 characters":                                                                             "најмногу 500 знаци",
		"choose at least one scope":                                                                          "изберете барем една дозвола",
		"country name for %s is %q (UJP %s)":                                                                 "називот на државата за %s е %q (УЈП %s)",
		"currency name for %s is %q (UJP %s)":                                                                "називот на валутата за %s е %q (УЈП %s)",
		"description of %s is %q (UJP %s)":                                                                   "описот на %s е %q (УЈП %s)",
		"document type %s requires a reference (UJP %s)":                                                     "видот на документ %s бара референца (УЈП %s)",
		"has more than %d lines":                                                                             "има повеќе од %d ставки",
		"is %s; the document is in %s":                                                                       "е %s; документот е во %s",
		"is %s; the service computes %s":                                                                     "е %s; сервисот пресметува %s",
		"is longer than %d characters":                                                                       "е подолг од %d знаци",
		"is longer than 500 characters":                                                                      "е подолг од 500 знаци",
		"is not a field of this request":                                                                     "не е поле на ова барање",
		"is not a valid ЕДБ: the 13th digit is not the check digit of the first 12":                          "не е важечки ЕДБ: 13-тата цифра не е контролната цифра на првите 12",
		"is not a valid ЕДБ: the 13th digit is not the check digit of the first 12 (UJP %s)":                 "не е важечки ЕДБ: 13-тата цифра не е контролната цифра на првите 12 (УЈП %s)",
		"is not an e-mail address":                                                                           "не е адреса на е-пошта",
		"is required":                                                                                        "е задолжително",
		"%q is not a role (owner, staff or viewer)":                                                          "%q не е улога (сопственик, вработен или преглед)",
		"has %d characters; at least %d are required":                                                        "има %d знаци; потребни се најмалку %d",
		"is required for a currency other than MKD":                                                          "е задолжително за валута различна од МКД",
		"is required for a party in MK; for a foreign party with a foreignTaxNumber, give its country (a countries code such as \"DE\")":          "е задолжително за субјект во Македонија; за странски субјект со foreignTaxNumber наведете ја неговата земја (код на земја, на пр. \"DE\")",
		"is required for a party in MK; a foreign party gives its country (a countries code such as \"DE\") and foreignTaxNumber instead":         "е задолжително за субјект во Македонија; странски субјект ја наведува својата земја (код на земја, на пр. \"DE\") и foreignTaxNumber",
		"is %s%%, but the company is not registered for VAT and may not show VAT (ЗДДВ член 51 став 3): use vatPercent 0 with taxIndicator DDV-G": "е %s%%, но компанијата не е регистрирана за ДДВ и не смее да искажува ДДВ (ЗДДВ член 51 став 3): користете vatPercent 0 со taxIndicator DDV-G",
		"is required: UJP identifies the signer by the EUJP id of their e-UJP registration (only the sandbox's simulator makes one up)":           "е задолжително: УЈП го препознава потпишувачот според EUJP идентификаторот од неговата регистрација во еУЈП (само симулаторот во песокот измислува еден)",
		"is required with reason %s (%s)": "е задолжително со причината %s (%s)",
		"is self-signed":                  "е самопотпишан",
		"lines are numbered 1, 2, … in order; expected %d (UJP %s)": "ставките се нумерираат 1, 2, … по ред; се очекува %d (УЈП %s)",
		"longer than %d characters (UJP %s)":                        "подолго од %d знаци (УЈП %s)",
		"malformed JSON":                                            "неисправен JSON",
		"malformed JSON: the body is empty":                         "неисправен JSON: телото е празно",
		"must be 0, 1 (storno) or 2 (correction) (UJP %s)":          "мора да биде 0, 1 (сторно) или 2 (корекција) (УЈП %s)",
		"must be 13 digits (ЕДБ)":                                   "мора да има 13 цифри (ЕДБ)",
		"must be 2 (a correction)":                                  "мора да биде 2 (корекција)",
		"must be a JSON array, not %s":                              "мора да биде JSON низа, а не %s",
		"must be a JSON object, not %s":                             "мора да биде JSON објект, а не %s",
		"must be a date YYYY-MM-DD":                                 "мора да биде датум ГГГГ-ММ-ДД",
		"must be a day that has ended in Europe/Skopje (at most %s now: UJP's lists of a day are final %s after it ends)": "мора да биде ден што завршил во Скопје (сега најмногу %s: листите на УЈП за еден ден се конечни %s по неговиот крај)",
		"must be a month, YYYY-MM":  "мора да биде месец, ГГГГ-ММ",
		"must be after createdFrom": "мора да биде по createdFrom",
		"must be bridge or sdk":     "мора да биде bridge или sdk",
		"must be digits":            "мора да биде од цифри",
		"must be greater than zero": "мора да биде поголемо од нула",
		"must be one of pending, accepted, auto_accepted, rejected":                                    "мора да биде едно од pending, accepted, auto_accepted, rejected",
		"must be one of user_declined, policy, token_missing, pin_locked, payload_invalid, unattended": "мора да биде едно од user_declined, policy, token_missing, pin_locked, payload_invalid, unattended",
		"must be sandbox or production":                                                                "мора да биде sandbox или production",
		"must not be before the original's issue date %s":                                              "не смее да биде пред датумот на издавање на оригиналот %s",
		"must not be empty":                              "не смее да биде празно",
		"must not be negative":                           "не смее да биде негативно",
		"name at least one event type, or \"*\" for all": "наведете барем еден вид настан, или \"*\" за сите",
		"needs at least one line":                        "бара барем една ставка",
		"not a cursor returned by this API; pass nextCursor back unchanged": "не е курсор што го вратил овој API; вратете го nextCursor непроменет",
		"not a company this credential may act for":                         "не е компанија за која овој пристап смее да дејствува",
		"outside the agent's companies":                                     "надвор од компаниите на агентот",
		"belongs to the other environment":                                  "припаѓа на другата средина",
		"%s %s is after the document's date %s (UJP %s)":                    "%s %s е по датумот на документот %s (УЈП %s)",
		"not a date in the form YYYY-MM-DD (UJP %s)":                        "не е датум во облик ГГГГ-ММ-ДД (УЈП %s)",
		"not found in UJP's registry":                                       "не е пронајден во регистарот на УЈП",
		"not found in UJP's registry (UJP refuses it with E1014)":           "не е пронајден во регистарот на УЈП (УЈП го одбива со E1014)",
		"rate of %s is %d (UJP %s)":                                         "стапката на %s е %d (УЈП %s)",
		"required (UJP %s)":                                                 "задолжително (УЈП %s)",
		"required and not zero (UJP %s)":                                    "задолжително и различно од нула (УЈП %s)",
		"required for a resident buyer (UJP %s)":                            "задолжително за купувач резидент (УЈП %s)",
		"tax indicator %s is used with tax group %s, not %s (%s%%)":         "даночната ознака %s се користи со даночна група %s, а не %s (%s%%)",
		"tax indicator %s is used with tax group %s, not %s (UJP %s)":       "даночната ознака %s се користи со даночна група %s, а не %s (УЈП %s)",
		"the account's plan does not include production":                    "планот на сметката не вклучува продукција",
		"this cursor is not a position of this service's event feed; start again with after=start or after=now": "овој курсор не е позиција во текот на настани на овој сервис; почнете одново со after=start или after=now",
		"this cursor was issued for different filters; start again without a cursor":                            "овој курсор е издаден за други филтри; почнете одново без курсор",
		"trailing data after the JSON object":                                                                   "вишок податоци по JSON објектот",
		"trailing data after the JSON value":                                                                    "вишок податоци по JSON вредноста",
		"unit prices are not negative; a storno negates quantities (UJP %s)":                                    "единечните цени не се негативни; сторното ги негира количините (УЈП %s)",
		"unknown correction reason %q (UJP %s)":                                                                 "непозната причина за корекција %q (УЈП %s)",
		"unknown country code %q (ISO 3166-1 alpha-2, Latin letters) (UJP %s)":                                  "непознат код на држава %q (ISO 3166-1 alpha-2, латинични букви) (УЈП %s)",
		"unknown currency %q (UJP %s)":                                                                          "непозната валута %q (УЈП %s)",
		"unknown document type %q (UJP %s)":                                                                     "непознат вид на документ %q (УЈП %s)",
		"unknown field":                                                                                         "непознато поле",
		"unknown payment type %q (UJP %s)":                                                                      "непознат начин на плаќање %q (УЈП %s)",
		"unknown reference document type %q (UJP %s)":                                                           "непознат вид на референтен документ %q (УЈП %s)",
		"unknown tax group %q (UJP %s)":                                                                         "непозната даночна група %q (УЈП %s)",
		"unknown tax indicator %q (UJP %s)":                                                                     "непозната даночна ознака %q (УЈП %s)",
		"unknown void reason %q (UJP %s)":                                                                       "непозната причина за сторно %q (УЈП %s)",
		"unknown, used or expired":                                                                              "непознат, искористен или истечен",
	}
}
