/* TFLite_Detection_PostProcess float32 (TFLM: kernels/detection_postprocess.cc):
 * box decoding in double, then fast or regular non-max suppression (detection.h). */
#include <math.h>
#include <string.h>

#include "nnrt/kernels/detection.h"

/* std::max<float> / std::min<float> as TFLM calls them (the first operand wins ties
 * and unordered pairs). */
static float max_first(float a, float b) { return (a < b) ? b : a; }
static float min_first(float a, float b) { return (b < a) ? b : a; }

typedef struct {
    float *decoded;       /* [4 N] ymin, xmin, ymax, xmax */
    float *scores;        /* [N] the column being suppressed */
    float *keep_scores;   /* [N] scores >= threshold, in anchor order */
    int32_t *keep_index;  /* [N] their anchors */
    int32_t *order;       /* [N] positions in keep_*, by decreasing score */
    int32_t *merge;       /* [N] merge buffer of the sort */
    int32_t *selected;    /* [N] anchors taken by one suppression */
    int32_t *best_class;  /* [N] fast NMS: each anchor's best class */
    uint8_t *active;      /* [N] candidates still in play */
    int32_t *cand_index;  /* regular NMS [max_detections + N]: anchor * stride + column */
    float *cand_score;    /* [max_detections + N] */
    int32_t *cand_order;  /* [max_detections + N] */
    int32_t *cand_merge;  /* [max_detections + N] */
    int32_t *next_index;  /* [max_detections + N] */
    float *next_score;    /* [max_detections + N] */
} work_t;

/* Stable sort of idx[0..n) by decreasing values[idx[k]]: a top-down merge sort (equal
 * values keep their order, as TFLM's DecreasingArgSort and, for a strict total order
 * by (value, position), its DecreasingPartialArgSort). */
static void sort_decreasing(int32_t *idx, int32_t *buf, int32_t n, const float *values)
{
    if (n < 2) {
        return;
    }
    const int32_t half = n / 2;
    sort_decreasing(idx, buf, half, values);
    sort_decreasing(idx + half, buf, n - half, values);
    int32_t l = 0;
    int32_t r = half;
    for (int32_t k = 0; k < n; ++k) {
        if (l >= half || (r < n && values[idx[r]] > values[idx[l]])) {
            buf[k] = idx[r++];
        } else {
            buf[k] = idx[l++];
        }
    }
    memcpy(idx, buf, (size_t)n * sizeof(int32_t));
}

static float iou(const float *boxes, int32_t i, int32_t j)
{
    const float *a = boxes + 4 * i;
    const float *b = boxes + 4 * j;
    const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0 || area_b <= 0) {
        return 0.0f;
    }
    const float ymin = max_first(a[0], b[0]);
    const float xmin = max_first(a[1], b[1]);
    const float ymax = min_first(a[2], b[2]);
    const float xmax = min_first(a[3], b[3]);
    const float inter = max_first(ymax - ymin, 0.0f) * max_first(xmax - xmin, 0.0f);
    return inter / (area_a + area_b - inter);
}

/* Non-max suppression of w->scores: the taken anchors in w->selected, their count. */
static int32_t suppress(const nnrt_detection_postprocess_params_t *p, work_t *w,
                        int32_t limit)
{
    const int32_t n = p->num_boxes;
    int32_t kept = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (w->scores[i] >= p->score_threshold) {
            w->keep_scores[kept] = w->scores[i];
            w->keep_index[kept] = i;
            ++kept;
        }
    }
    for (int32_t k = 0; k < kept; ++k) {
        w->order[k] = k;
        w->active[k] = 1;
    }
    sort_decreasing(w->order, w->merge, kept, w->keep_scores);
    const int32_t out_size = kept < limit ? kept : limit;
    int32_t active = kept;
    int32_t taken = 0;
    for (int32_t i = 0; i < kept; ++i) {
        if (active == 0 || taken >= out_size) {
            break;
        }
        if (!w->active[i]) {
            continue;
        }
        const int32_t box = w->keep_index[w->order[i]];
        w->selected[taken++] = box;
        w->active[i] = 0;
        --active;
        for (int32_t j = i + 1; j < kept; ++j) {
            if (w->active[j] && iou(w->decoded, box, w->keep_index[w->order[j]]) >
                                    p->iou_threshold) {
                w->active[j] = 0;
                --active;
            }
        }
    }
    return taken;
}

static nnrt_status_t decode(const nnrt_detection_postprocess_params_t *p, const float *enc,
                            const float *anchors, float *out)
{
    for (int32_t i = 0; i < p->num_boxes; ++i) {
        const float *e = enc + (size_t)i * (size_t)p->box_stride;
        const float *a = anchors + 4 * i; /* y, x, h, w */
        const float yc = (float)((double)e[0] / (double)p->y_scale * (double)a[2] +
                                 (double)a[0]);
        const float xc = (float)((double)e[1] / (double)p->x_scale * (double)a[3] +
                                 (double)a[1]);
        const float hh = (float)(0.5 * exp((double)e[2] / (double)p->h_scale) * (double)a[2]);
        const float hw = (float)(0.5 * exp((double)e[3] / (double)p->w_scale) * (double)a[3]);
        float *b = out + 4 * i;
        b[0] = yc - hh;
        b[1] = xc - hw;
        b[2] = yc + hh;
        b[3] = xc + hw;
    }
    /* TFLM's ValidateBoxes (before any suppression; every box, every time). */
    for (int32_t i = 0; i < p->num_boxes; ++i) {
        const float *b = out + 4 * i;
        if (b[0] >= b[2] || b[1] >= b[3]) {
            return NNRT_ERR_ARG;
        }
    }
    return NNRT_OK;
}

static void put(const work_t *w, int32_t k, int32_t anchor, float cls, float score,
                float *boxes, float *classes, float *scores)
{
    memcpy(boxes + 4 * k, w->decoded + 4 * anchor, 4 * sizeof(float));
    classes[k] = cls;
    scores[k] = score;
}

static int32_t fast_nms(const nnrt_detection_postprocess_params_t *p, work_t *w,
                        const float *class_scores, float *boxes, float *classes,
                        float *scores)
{
    const int32_t offset = p->class_stride - p->num_classes;
    for (int32_t i = 0; i < p->num_boxes; ++i) {
        const float *s = class_scores + (size_t)i * (size_t)p->class_stride + offset;
        int32_t best = 0;
        for (int32_t c = 1; c < p->num_classes; ++c) {
            if (s[c] > s[best]) {
                best = c;
            }
        }
        w->best_class[i] = best;
        w->scores[i] = s[best];
    }
    const int32_t taken = suppress(p, w, p->max_detections);
    for (int32_t k = 0; k < taken; ++k) {
        const int32_t a = w->selected[k];
        put(w, k, a, (float)w->best_class[a], w->scores[a], boxes, classes, scores);
    }
    return taken;
}

static int32_t regular_nms(const nnrt_detection_postprocess_params_t *p, work_t *w,
                           const float *class_scores, float *boxes, float *classes,
                           float *scores)
{
    const int32_t offset = p->class_stride - p->num_classes;
    int32_t count = 0;
    for (int32_t c = 0; c < p->num_classes; ++c) {
        const int32_t column = c + offset;
        for (int32_t i = 0; i < p->num_boxes; ++i) {
            w->scores[i] = class_scores[(size_t)i * (size_t)p->class_stride + column];
        }
        const int32_t taken = suppress(p, w, p->detections_per_class);
        int32_t total = count;
        for (int32_t k = 0; k < taken; ++k) {
            const int32_t a = w->selected[k];
            w->cand_index[total] = a * p->class_stride + column;
            w->cand_score[total] = w->scores[a];
            ++total;
        }
        for (int32_t k = 0; k < total; ++k) {
            w->cand_order[k] = k;
        }
        sort_decreasing(w->cand_order, w->cand_merge, total, w->cand_score);
        count = total < p->max_detections ? total : p->max_detections;
        for (int32_t k = 0; k < count; ++k) {
            w->next_index[k] = w->cand_index[w->cand_order[k]];
            w->next_score[k] = w->cand_score[w->cand_order[k]];
        }
        memcpy(w->cand_index, w->next_index, (size_t)count * sizeof(int32_t));
        memcpy(w->cand_score, w->next_score, (size_t)count * sizeof(float));
    }
    for (int32_t k = 0; k < count; ++k) {
        const int32_t anchor = w->cand_index[k] / p->class_stride;
        const int32_t cls = w->cand_index[k] - anchor * p->class_stride - offset;
        put(w, k, anchor, (float)cls, w->cand_score[k], boxes, classes, scores);
    }
    return count;
}

nnrt_status_t nnrt_detection_postprocess_f32(const nnrt_detection_postprocess_params_t *p,
                                             const float *box_encodings,
                                             const float *class_scores,
                                             const float *anchors, float *out_boxes,
                                             float *out_classes, float *out_scores,
                                             float *out_num, void *scratch)
{
    if (p == NULL || box_encodings == NULL || class_scores == NULL || anchors == NULL ||
        out_boxes == NULL || out_classes == NULL || out_scores == NULL || out_num == NULL ||
        scratch == NULL || p->num_boxes < 1 || p->box_stride < 4 || p->num_classes < 1 ||
        p->class_stride < p->num_classes || p->class_stride > p->num_classes + 1 ||
        p->max_detections < 0 || (p->use_regular_nms && p->detections_per_class < 1) ||
        !(p->iou_threshold > 0.0f && p->iou_threshold <= 1.0f)) {
        return NNRT_ERR_ARG;
    }
    const int32_t n = p->num_boxes;
    float *f = (float *)scratch;
    work_t w;
    w.decoded = f;
    w.scores = w.decoded + 4 * n;
    w.keep_scores = w.scores + n;
    w.keep_index = (int32_t *)(w.keep_scores + n);
    w.order = w.keep_index + n;
    w.merge = w.order + n;
    w.selected = w.merge + n;
    w.best_class = w.selected + n;
    w.active = (uint8_t *)(w.best_class + n);
    w.cand_index = NULL;
    w.cand_score = NULL;
    w.cand_order = NULL;
    w.cand_merge = NULL;
    w.next_index = NULL;
    w.next_score = NULL;
    if (p->use_regular_nms) { /* the lists after the candidate flags (ceil(N / 4) words) */
        const int32_t cap = p->max_detections + n;
        w.cand_index = w.best_class + n + (n + 3) / 4;
        w.cand_score = (float *)(w.cand_index + cap);
        w.cand_order = (int32_t *)(w.cand_score + cap);
        w.cand_merge = w.cand_order + cap;
        w.next_index = w.cand_merge + cap;
        w.next_score = (float *)(w.next_index + cap);
    }
    const nnrt_status_t st = decode(p, box_encodings, anchors, w.decoded);
    if (st != NNRT_OK) {
        return st;
    }
    const int32_t m = p->max_detections;
    memset(out_boxes, 0, (size_t)m * 4 * sizeof(float));
    memset(out_classes, 0, (size_t)m * sizeof(float));
    memset(out_scores, 0, (size_t)m * sizeof(float));
    const int32_t count = p->use_regular_nms
        ? regular_nms(p, &w, class_scores, out_boxes, out_classes, out_scores)
        : fast_nms(p, &w, class_scores, out_boxes, out_classes, out_scores);
    out_num[0] = (float)count;
    return NNRT_OK;
}
