/*
 * vocab.c - the words of vocab.h's lists as tables, and the one lookup
 * each name, parse and SQL list goes through.
 *
 * Every table is made from its X-macro, so a table and its enum cannot
 * disagree: a word's index in its table is its value (minus the first
 * value, 1 for the cancel reasons).
 */
#include "orchestrator/vocab.h"

#include <string.h>

#include "sweeps/error.h"

#define WORD(id, word) word,

static const char *const run_words[] = {SW_RUN_STATES(WORD)};
static const char *const outcome_words[] = {SW_OUTCOMES(WORD)};
static const char *const sweep_words[] = {SW_SWEEP_STATES(WORD)};
static const char *const cancel_words[] = {SW_CANCELS(WORD)};

static const struct {
    const char *what; /* for the parse error: "unknown <what> 'x'" */
    const char *const *words;
    size_t n;
    int first; /* the value of words[0] */
} lists[] = {
    [SW_VOCAB_RUN_STATES] = {"run state", run_words, SW_RUN_N_STATES, 0},
    [SW_VOCAB_OUTCOMES] = {"attempt outcome", outcome_words, SW_N_OUTCOMES, 0},
    [SW_VOCAB_SWEEP_STATES] = {"sweep state", sweep_words, SW_SWEEP_N_STATES,
                               0},
    [SW_VOCAB_CANCELS] = {"cancel reason", cancel_words, SW_N_CANCELS,
                          SW_CANCEL_TIMEOUT},
};

#define N_LISTS (sizeof(lists) / sizeof(lists[0]))

size_t sw_vocab_count(sw_vocab v)
{
    return (unsigned)v < N_LISTS ? lists[v].n : 0;
}

const char *sw_vocab_word(sw_vocab v, size_t i)
{
    return i < sw_vocab_count(v) ? lists[v].words[i] : NULL;
}

/* The word of `value` in list `v`; "unknown" outside it. */
static const char *name(sw_vocab v, int value)
{
    const char *w = NULL;

    if ((unsigned)v < N_LISTS && value >= lists[v].first)
        w = sw_vocab_word(v, (size_t)(value - lists[v].first));
    return w ? w : "unknown";
}

/* The value of `word` in list `v` into *out; SW_EINVALID if none. */
static int parse(sw_vocab v, int *out, const char *word)
{
    for (size_t i = 0; word && i < sw_vocab_count(v); i++) {
        if (strcmp(word, lists[v].words[i]) == 0) {
            *out = lists[v].first + (int)i;
            return SW_OK;
        }
    }
    return sw_error_set(SW_EINVALID, "unknown %s '%s'", lists[v].what,
                        word ? word : "(null)");
}

const char *sw_run_state_name(sw_run_state s)
{
    return name(SW_VOCAB_RUN_STATES, (int)s);
}

const char *sw_outcome_name(sw_outcome o)
{
    return name(SW_VOCAB_OUTCOMES, (int)o);
}

const char *sw_sweep_state_name(sw_sweep_state s)
{
    return name(SW_VOCAB_SWEEP_STATES, (int)s);
}

const char *sw_cancel_name(sw_cancel c)
{
    return name(SW_VOCAB_CANCELS, (int)c);
}

int sw_run_state_parse(sw_run_state *out, const char *word)
{
    int v = 0, error = parse(SW_VOCAB_RUN_STATES, &v, word);

    if (error == SW_OK)
        *out = (sw_run_state)v;
    return error;
}

int sw_outcome_parse(sw_outcome *out, const char *word)
{
    int v = 0, error = parse(SW_VOCAB_OUTCOMES, &v, word);

    if (error == SW_OK)
        *out = (sw_outcome)v;
    return error;
}

int sw_sweep_state_parse(sw_sweep_state *out, const char *word)
{
    int v = 0, error = parse(SW_VOCAB_SWEEP_STATES, &v, word);

    if (error == SW_OK)
        *out = (sw_sweep_state)v;
    return error;
}

int sw_cancel_parse(sw_cancel *out, const char *word)
{
    int v = 0, error = parse(SW_VOCAB_CANCELS, &v, word);

    if (error == SW_OK)
        *out = (sw_cancel)v;
    return error;
}

bool sw_sweep_state_is(const char *word, sw_sweep_state s)
{
    return word && strcmp(word, sw_sweep_state_name(s)) == 0;
}

/* A lost attempt's reason begins with the outcome's word (lifecycle.c's
 * lost_attempt()). */
bool sw_reason_is_lost(const char *reason)
{
    const char *lost = sw_outcome_name(SW_OUTCOME_LOST);

    return reason && strncmp(reason, lost, strlen(lost)) == 0;
}

bool sw_reason_is_replaced(const char *reason)
{
    const char *w = sw_cancel_name(SW_CANCEL_REPLACED);
    size_t n = strlen(w);

    return reason && strncmp(reason, w, n) == 0 &&
           strncmp(reason + n, " by ", 4) == 0;
}

void sw_vocab_sql_list(sw_buf *out, sw_vocab v)
{
    const char *w;

    sw_buf_putc(out, '(');
    for (size_t i = 0; (w = sw_vocab_word(v, i)) != NULL; i++) {
        sw_buf_puts(out, i ? ", '" : "'");
        for (; *w; w++) /* a quote in a word is doubled, as SQL's */
            sw_buf_put(out, *w == '\'' ? "''" : w, *w == '\'' ? 2 : 1);
        sw_buf_putc(out, '\'');
    }
    sw_buf_putc(out, ')');
}
