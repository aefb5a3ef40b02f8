/* Internal: the reports of an analysis: text, JSON, Markdown, HTML. */
#ifndef VT_ANALYZER_REPORT_H
#define VT_ANALYZER_REPORT_H

#include <stdio.h>

#include "analysis/analysis.h"

/* Each writes the whole report of r to f; returns 0, or -1 on a write error. */
int vt__report_text(FILE *f, const struct vt_result *r);
int vt__report_json(FILE *f, const struct vt_result *r);
int vt__report_markdown(FILE *f, const struct vt_result *r);
int vt__report_html(FILE *f, const struct vt_result *r);

#endif
