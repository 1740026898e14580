package demo.server;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * SkewServlet's record and a request without its sleep, in a class of their own (a trace of
 * SkewServlet does not count them):
 *
 * GET /stats        "calls N slow S kept K sited T", then "INNER_NS OUTER_NS SITE_NS" per kept
 *                   call, in the order they completed: N calls of doGet since the reset, S of
 *                   them meant slow, T timed by service around doGet (its site)
 * GET /stats?reset  starts the record and the counter afresh (the 10th call after it is slow)
 * GET /none         an empty 200, as /skew answers, but without its sleep: the rest of a request
 */
public class SkewStatsServlet extends HttpServlet {
    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
        if ("/none".equals(request.getServletPath()))
            return;
        response.setContentType("text/plain");
        StringBuilder out = new StringBuilder();
        synchronized (SkewServlet.LOCK) {
            if (request.getParameter("reset") != null) {
                SkewServlet.started = 0;
                SkewServlet.recorded = 0;
                SkewServlet.slow = 0;
                SkewServlet.sited = 0;
                out.append("reset\n");
            } else {
                int kept = Math.min(SkewServlet.recorded, SkewServlet.CAPACITY);
                out.append("calls ").append(SkewServlet.recorded).append(" slow ").append(SkewServlet.slow)
                    .append(" kept ").append(kept).append(" sited ").append(SkewServlet.sited).append('\n');
                for (int i = 0; i < kept; i++)
                    out.append(SkewServlet.INNER_NS[i]).append(' ').append(SkewServlet.OUTER_NS[i]).append(' ')
                        .append(SkewServlet.SITE_NS[i]).append('\n');
            }
        }
        response.getWriter().print(out);
    }
}
