package demo.server;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One PostgreSQL query per request through pgjdbc, timed by the servlet itself around
 * PreparedStatement.executeQuery(): the reference a trace of the driver is held against.
 *
 * GET /query          runs the query (rows and server-side sleep from the system properties
 *                     jmt.query.rows, default 100, and jmt.query.sleep_ms, default 2)
 * GET /query?stats    "calls N query_ns NS virtual N" since the start: executeQuery calls, the
 *                     ns they took by System.nanoTime(), and how many ran on a virtual thread
 *
 * System properties: jmt.jdbc.url (required), jmt.pool (connections, default 8).
 */
public class QueryServlet extends HttpServlet {
    private static final String SQL =
        "with pause as (select pg_sleep(?)) select n, md5(n::text) from pause, generate_series(1, ?) n";

    /** A connection with its statement, prepared once. */
    private static final class Session {
        final Connection connection;
        final PreparedStatement query;

        Session(String url) throws SQLException {
            connection = DriverManager.getConnection(url);
            query = connection.prepareStatement(SQL);
        }
    }

    private final AtomicLong calls = new AtomicLong();
    private final AtomicLong queryNs = new AtomicLong();
    private final AtomicLong virtualCalls = new AtomicLong();
    private BlockingQueue<Session> pool;
    private int rows;
    private double sleepSeconds;
    private Method isVirtual;

    @Override
    public void init() throws ServletException {
        String url = System.getProperty("jmt.jdbc.url");
        if (url == null)
            throw new ServletException("no -Djmt.jdbc.url");
        int size = Integer.getInteger("jmt.pool", 8);
        rows = Integer.getInteger("jmt.query.rows", 100);
        sleepSeconds = Integer.getInteger("jmt.query.sleep_ms", 2) / 1000.0;
        try {
            isVirtual = Thread.class.getMethod("isVirtual");  // JDK 21+
        } catch (NoSuchMethodException e) {
            isVirtual = null;
        }
        pool = new ArrayBlockingQueue<>(size);
        try {
            Class.forName("org.postgresql.Driver");
            for (int i = 0; i < size; i++)
                pool.add(new Session(url));
        } catch (ClassNotFoundException | SQLException e) {
            throw new ServletException("cannot connect to " + url + ": " + e, e);
        }
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response)
            throws ServletException, IOException {
        response.setContentType("text/plain");
        if (request.getParameter("stats") != null) {
            response.getWriter().println("calls " + calls.get() + " query_ns " + queryNs.get()
                                         + " virtual " + virtualCalls.get());
            return;
        }
        long checksum = 0;
        Session session = null;
        try {
            session = pool.take();
            session.query.setDouble(1, sleepSeconds);
            session.query.setInt(2, rows);
            long start = System.nanoTime();
            ResultSet result = session.query.executeQuery();
            long took = System.nanoTime() - start;
            while (result.next())
                checksum += result.getInt(1) + result.getString(2).length();
            result.close();
            queryNs.addAndGet(took);
            calls.incrementAndGet();
            if (onVirtualThread())
                virtualCalls.incrementAndGet();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new ServletException(e);
        } catch (SQLException e) {
            throw new ServletException(e);
        } finally {
            if (session != null)
                pool.add(session);
        }
        response.getWriter().println(checksum);
    }

    private boolean onVirtualThread() {
        try {
            return isVirtual != null && (Boolean) isVirtual.invoke(Thread.currentThread());
        } catch (ReflectiveOperationException e) {
            return false;
        }
    }

    @Override
    public void destroy() {
        for (Session session : pool) {
            try {
                session.connection.close();
            } catch (SQLException e) {
                // the server may be gone first
            }
        }
    }
}
