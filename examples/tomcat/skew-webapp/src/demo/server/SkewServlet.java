package demo.server;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * A request handler with a known skewed latency: every 10th call since the last reset (a
 * deterministic counter) sleeps 20 ms, the others 1 ms, so its p50 and p99 lie far apart. Each
 * call times itself with System.nanoTime(): around the sleep (inner) and from its first statement
 * to the end of the sleep (outer), and keeps both; a trace of doGet's percentiles is held against
 * those of the same calls. The response is empty (200).
 *
 * GET /skew   one call. The record is read and reset through SkewStatsServlet (/stats), a class
 *             of its own, so that a trace of this class counts the requests of /skew only.
 *
 * The counter and the record are fields under one lock, not methods, so that a call makes no Java
 * call but the sleep and the clock reads: few probe events inside it.
 */
public class SkewServlet extends HttpServlet {
    static final long FAST_MS = 1;
    static final long SLOW_MS = 20;
    static final long SLOW_EVERY = 10;
    static final int CAPACITY = 1 << 16;

    static final Object LOCK = new Object();
    static final long[] INNER_NS = new long[CAPACITY];
    static final long[] OUTER_NS = new long[CAPACITY];
    static long started;  // calls since the reset: the counter that picks the slow ones
    static int recorded;  // calls completed (the first CAPACITY kept)
    static int slow;      // of them, meant to be slow

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
