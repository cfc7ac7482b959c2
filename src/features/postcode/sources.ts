export interface Source {
  name: string;
  url: string;
  licence: string;
  licence_url: string;
  attribution: string;
}

/** postcodes.io serves the ONS Postcode Directory; its licence requires this statement. */
export function postcodesIoSource(year: number): Source {
  return {
    name: "postcodes.io (ONS Postcode Directory)",
    url: "https://postcodes.io/",
    licence: "Open Government Licence v3.0",
    licence_url: "https://www.nationalarchives.gov.uk/doc/open-government-licence/version/3/",
    attribution:
      `Contains OS data © Crown copyright and database right ${year}. ` +
      `Contains Royal Mail data © Royal Mail copyright and database right ${year}. ` +
      `Contains National Statistics data © Crown copyright and database right ${year}. ` +
      "Source: Office for National Statistics licensed under the Open Government Licence v.3.0.",
  };
}
