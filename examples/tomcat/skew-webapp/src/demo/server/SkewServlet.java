package demo.server;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/**
 * A request handler with a known skewed latency: every 10th call since the last reset (a
 * deterministic counter) sleeps 20 ms, the others 1 ms, so its p50 and p99 lie far apart. Each
 * call is timed with System.nanoTime(): around the sleep (inner), from doGet's first statement to
 * the end of the sleep (outer), and by service around the whole call of doGet (site: its entry and
 * return, and whatever stops the thread there, such as a safepoint at the return, included). A
 * trace of doGet's percentiles is held against those of the same calls: no probe of doGet lies
 * outside the site. The response is empty (200).
 *
 * GET /skew   one call. The record is read and reset through SkewStatsServlet (/stats), a class
 *             of its own, so that a trace of this class counts the requests of /skew only.
 *
 * The counter and the record are fields under one lock, not methods, so that a call makes no Java
 * call but the sleep and the clock reads: few probe events inside it. The sites are kept in the
 * order service completes, the rest in the order doGet completes: the same order when requests
 * come one at a time, and every check of the test compares sorted timings anyway.
 */
public class SkewServlet extends HttpServlet {
    static final long FAST_MS = 1;
    static final long SLOW_MS = 20;
    static final long SLOW_EVERY = 10;
    static final int CAPACITY = 1 << 16;

    static final Object LOCK = new Object();
    static final long[] INNER_NS = new long[CAPACITY];
    static final long[] OUTER_NS = new long[CAPACITY];
    static final long[] SITE_NS = new long[CAPACITY];
    static long started;  // calls since the reset: the counter that picks the slow ones
    static int recorded;  // calls completed (the first CAPACITY kept)
    static int slow;      // of them, meant to be slow
    static int sited;     // calls of doGet that service timed and completed

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response)
        throws ServletException, IOException {
        if (!"GET".equals(request.getMethod())) {
            super.service(request, response);
            return;
        }
        long before = System.nanoTime();
        doGet(request, response);
        long after = System.nanoTime();
        synchronized (LOCK) {
            if (sited < CAPACITY)
                SITE_NS[sited] = after - before;
            sited++;
        }
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws ServletException {
        long start = System.nanoTime();
        long call;
        synchronized (LOCK) {
            call = ++started;
        }
        long sleepMs = call % SLOW_EVERY == 0 ? SLOW_MS : FAST_MS;
        long before = System.nanoTime();
        try {
            Thread.sleep(sleepMs);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServletException(e);
        }
        long end = System.nanoTime();
        synchronized (LOCK) {
            if (recorded < CAPACITY) {
                INNER_NS[recorded] = end - before;
                OUTER_NS[recorded] = end - start;
            }
            recorded++;
            if (sleepMs == SLOW_MS)
                slow++;
        }
    }
}
