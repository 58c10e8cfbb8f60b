package dev.ferry.serve.protocol;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import javax.xml.XMLConstants;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/** XML in and out: a small writer for S3 responses, and a parser for request bodies that refuses DTDs. */
public final class Xml {
    static final String NS = "http://s3.amazonaws.com/doc/2006-03-01/";

    private final StringBuilder out = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");

    public Xml open(String name) {
        out.append('<').append(name).append('>');
        return this;
    }

    public Xml openRoot(String name) {
        out.append('<').append(name).append(" xmlns=\"").append(NS).append("\">");
        return this;
    }

    /** Opens an element with an {@code xsi:type} (an ACL's {@code <Grantee>}). */
    public Xml openTyped(String name, String xsiType) {
        out.append('<').append(name).append(" xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"");
        escape(xsiType);
        out.append("\">");
        return this;
    }

    public Xml close(String name) {
        out.append("</").append(name).append('>');
        return this;
    }

    public Xml element(String name, Object value) {
        if (value == null) {
            return this;
        }
        out.append('<').append(name).append('>');
        escape(String.valueOf(value));
        return close(name);
    }

    private void escape(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                case '\'' -> out.append("&apos;");
                default -> {
                    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                        out.append("&#x").append(Integer.toHexString(c)).append(';');
                    } else {
                        out.append(c);
                    }
                }
            }
        }
    }

    byte[] bytes() {
        return out.toString().getBytes(StandardCharsets.UTF_8);
    }

    /** Parses a request body; DOCTYPEs and external entities are refused (XXE). */
    public static Element parse(byte[] body, String expectedRoot) throws S3Error {
        if (body.length == 0) {
            throw S3Error.badRequest("MalformedXML", "the request body is empty; expected <" + expectedRoot + ">");
        }
        try {
            DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
            f.setNamespaceAware(true);
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            f.setXIncludeAware(false);
            f.setExpandEntityReferences(false);
            DocumentBuilder b = f.newDocumentBuilder();
            b.setErrorHandler(null);
            Document doc = b.parse(new ByteArrayInputStream(body));
            Element root = doc.getDocumentElement();
            if (!root.getLocalName().equals(expectedRoot)) {
                throw S3Error.badRequest("MalformedXML", "expected <" + expectedRoot + ">, not <" + root.getLocalName() + ">");
            }
            return root;
        } catch (S3Error e) {
            throw e;
        } catch (Exception e) {
            throw S3Error.badRequest("MalformedXML", "the XML is not well-formed: " + e.getMessage());
        }
    }

    /** Child elements of {@code parent} named {@code name} (any namespace). */
    public static List<Element> children(Element parent, String name) {
        List<Element> out = new ArrayList<>();
        NodeList nodes = parent.getChildNodes();
        for (int i = 0; i < nodes.getLength(); i++) {
            Node n = nodes.item(i);
            if (n instanceof Element e && name.equals(e.getLocalName())) {
                out.add(e);
            }
        }
        return out;
    }

    /** The text of the one child named {@code name}, trimmed (numbers, ETags, flags), or null; see {@link #rawText}. */
    public static String text(Element parent, String name) throws S3Error {
        String t = rawText(parent, name);
        return t == null ? null : t.trim();
    }

    /**
     * The text of the one child named {@code name} exactly as sent, whitespace included (object keys, version
     * ids), or null. Two such children make the request ambiguous (which one would it act on?): 400 MalformedXML.
     */
    public static String rawText(Element parent, String name) throws S3Error {
        List<Element> c = children(parent, name);
        if (c.size() > 1) {
            throw S3Error.badRequest("MalformedXML", "<" + parent.getLocalName() + "> holds " + c.size() + " <" + name
                    + "> elements; it takes one");
        }
        return c.isEmpty() ? null : c.get(0).getTextContent();
    }
}
